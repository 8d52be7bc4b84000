import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { WaEngineName } from '@bns/contracts';

export interface LinkRow {
  userId: string;
  sessionId: string;
  engine: WaEngineName;
  phoneNumber: string;
}

/**
 * TypeORM answers a bare UPDATE/DELETE … RETURNING as [rows, count]; wrapping it in a CTE that
 * counts keeps every answer a plain row list.
 */
export function countOf(rows: { n: number }[]): number {
  return rows[0]?.n ?? 0;
}

const COLUMNS = `user_id AS "userId", session_id AS "sessionId", engine, phone_number AS "phoneNumber"`;

/** The `links` table: one row per linked account, the source of truth for restores. */
@Injectable()
export class LinksRepository {
  constructor(private readonly db: DataSource) {}

  async find(userId: string): Promise<LinkRow | undefined> {
    const rows: LinkRow[] = await this.db.query(`SELECT ${COLUMNS} FROM links WHERE user_id = $1`, [userId]);
    return rows[0];
  }

  async all(engine: WaEngineName): Promise<LinkRow[]> {
    return this.db.query(`SELECT ${COLUMNS} FROM links WHERE engine = $1 ORDER BY linked_at`, [engine]);
  }

  /** A new link replaces any older one of the same user (a fresh session id, welcome not yet sent). */
  async save(link: LinkRow): Promise<void> {
    await this.db.query(
      `INSERT INTO links (user_id, session_id, engine, phone_number, linked_at, welcome_sent_at, updated_at)
       VALUES ($1, $2, $3, $4, now(), NULL, now())
       ON CONFLICT (user_id) DO UPDATE SET session_id = excluded.session_id, engine = excluded.engine,
         phone_number = excluded.phone_number, linked_at = now(), welcome_sent_at = NULL, updated_at = now()`,
      [link.userId, link.sessionId, link.engine, link.phoneNumber],
    );
  }

  async touch(userId: string): Promise<void> {
    await this.db.query(`UPDATE links SET updated_at = now() WHERE user_id = $1`, [userId]);
  }

  async delete(userId: string): Promise<number> {
    return countOf(await this.db.query(`WITH d AS (DELETE FROM links WHERE user_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM d`, [userId]));
  }

  /** Claims the once-per-link welcome message; false when it was already claimed for this link. */
  async claimWelcome(userId: string, sessionId: string): Promise<boolean> {
    const claimed = await this.db.query(
      `WITH u AS (UPDATE links SET welcome_sent_at = now() WHERE user_id = $1 AND session_id = $2 AND welcome_sent_at IS NULL RETURNING 1)
       SELECT count(*)::int AS n FROM u`,
      [userId, sessionId],
    );
    return countOf(claimed) > 0;
  }
}
