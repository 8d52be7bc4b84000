import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { DeletionStatus, Retention } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';

export interface DeletionRow {
  deletion_id: string;
  requested_at: Date;
  finished_at: Date | null;
  services: DeletionStatus['services'];
}

const COLUMNS = 'deletion_id::text AS deletion_id, requested_at, finished_at, services';

/** Every query of account_deletions (keyed by the user's hash) and retention_settings. */
@Injectable()
export class AccountDeletionsRepository {
  constructor(readonly tx: Transactions) {}

  /** The user's running deletion, locked; or a new one (the unique index keeps it to one). */
  async startOrFind(
    em: EntityManager,
    userId: string,
    userKey: string,
    deletionId: string,
    at: Date,
  ): Promise<DeletionRow> {
    const made = await rows<DeletionRow>(
      em,
      `INSERT INTO account_deletions (deletion_id, user_key, pending_user_id, requested_at) VALUES ($1, $2, $4, $3)
       ON CONFLICT (user_key) WHERE finished_at IS NULL DO NOTHING RETURNING ${COLUMNS}`,
      [deletionId, userKey, at, userId],
    );
    if (made[0]) return made[0];
    return (
      await rows<DeletionRow>(
        em,
        `SELECT ${COLUMNS} FROM account_deletions WHERE user_key = $1 AND finished_at IS NULL`,
        [userKey],
      )
    )[0]!;
  }

  async latest(userKey: string): Promise<DeletionRow | undefined> {
    return (
      await rows<DeletionRow>(
        this.tx.manager,
        `SELECT ${COLUMNS} FROM account_deletions WHERE user_key = $1 ORDER BY requested_at DESC LIMIT 1`,
        [userKey],
      )
    )[0];
  }

  /** Records one service's receipt (the first one counts); the row after it. */
  async receipt(
    deletionId: string,
    service: string,
    state: { status: 'done'; at: string; rows: number },
  ): Promise<DeletionRow | undefined> {
    return (
      await rows<DeletionRow>(
        this.tx.manager,
        `UPDATE account_deletions SET services = jsonb_build_object($2::text, $3::jsonb) || services
          WHERE deletion_id = $1 RETURNING ${COLUMNS}`,
        [deletionId, service, JSON.stringify(state)],
      )
    )[0];
  }

  /** Marks the deletion finished (once); the time it finished. */
  async finish(deletionId: string, at: Date): Promise<Date> {
    return (
      await rows<{ finished_at: Date }>(
        this.tx.manager,
        `UPDATE account_deletions SET finished_at = coalesce(finished_at, $2), pending_user_id = NULL
          WHERE deletion_id = $1 RETURNING finished_at`,
        [deletionId, at],
      )
    )[0]!.finished_at;
  }

  /** Deletions still running that were requested before `before`: their request is published again. */
  async runningSince(before: Date): Promise<Array<{ deletion_id: string; user_id: string; requested_at: Date }>> {
    return rows(
      this.tx.manager,
      `SELECT deletion_id::text AS deletion_id, pending_user_id AS user_id, requested_at FROM account_deletions
        WHERE finished_at IS NULL AND requested_at < $1 ORDER BY requested_at LIMIT 100`,
      [before],
    );
  }

  async retention(userId: string): Promise<Retention | undefined> {
    return (
      await rows<Retention>(this.tx.manager, `SELECT days FROM retention_settings WHERE user_id = $1`, [userId])
    )[0];
  }

  async setRetention(userId: string, days: Retention['days'], at: Date): Promise<void> {
    await rows(
      this.tx.manager,
      `INSERT INTO retention_settings (user_id, days, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET days = EXCLUDED.days, updated_at = EXCLUDED.updated_at`,
      [userId, days, at],
    );
  }

  /** Settings after user id `after` (every one stored: an owner cannot tell a stored 365 from the default). */
  async retentionPage(
    after: string | undefined,
    limit: number,
  ): Promise<Array<{ userId: string; days: Retention['days'] }>> {
    return rows(
      this.tx.manager,
      `SELECT user_id AS "userId", days FROM retention_settings WHERE user_id > $1 ORDER BY user_id LIMIT $2`,
      [after ?? '', limit],
    );
  }
}
