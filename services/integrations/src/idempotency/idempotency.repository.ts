import { Injectable } from '@nestjs/common';
import { row, rows, Transactions } from '@bns/service-kit';

export interface IdempotencyRow {
  fingerprint: string;
  status: number | null;
  body: string | null;
  created_at: Date;
}

/** Every query of idempotency_keys (one row per user and Idempotency-Key). */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly tx: Transactions) {}

  /**
   * Holds the key for a request (true), or answers what the key already holds. A row older than
   * `expiredBefore` is forgotten first: after the TTL a key may be used again.
   */
  claim(
    userId: string,
    key: string,
    fingerprint: string,
    now: Date,
    expiredBefore: Date,
  ): Promise<true | IdempotencyRow> {
    return this.tx.run(async (em) => {
      await rows(em, `DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at < $3`, [
        userId,
        key,
        expiredBefore,
      ]);
      const inserted = await rows(
        em,
        `INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING key`,
        [userId, key, fingerprint, now],
      );
      if (inserted.length > 0) return true;
      return (await row<IdempotencyRow>(
        em,
        `SELECT fingerprint, status, body, created_at FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
        [userId, key],
      ))!;
    });
  }

  /** A held key whose request never finished (its gateway died) is taken over by the next try. */
  async retake(userId: string, key: string, fingerprint: string, now: Date, heldBefore: Date): Promise<boolean> {
    const done = await rows(
      this.tx.manager,
      `UPDATE idempotency_keys SET created_at = $5 WHERE user_id = $1 AND key = $2 AND fingerprint = $3 AND status IS NULL AND created_at < $4 RETURNING key`,
      [userId, key, fingerprint, heldBefore, now],
    );
    return done.length > 0;
  }

  async finish(userId: string, key: string, fingerprint: string, status: number, body: string): Promise<void> {
    await rows(
      this.tx.manager,
      `UPDATE idempotency_keys SET status = $4, body = $5 WHERE user_id = $1 AND key = $2 AND fingerprint = $3`,
      [userId, key, fingerprint, status, body],
    );
  }

  async release(userId: string, key: string, fingerprint: string): Promise<void> {
    await rows(
      this.tx.manager,
      `DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND fingerprint = $3 AND status IS NULL`,
      [userId, key, fingerprint],
    );
  }

  async prune(before: Date): Promise<number> {
    return (await rows(this.tx.manager, `DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING 1`, [before]))
      .length;
  }
}
