import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { row, rows, Transactions } from '@bns/service-kit';

/** One LID ↔ number pair an account learned. */
export interface LidPhone {
  userId: string;
  lid: string;
  phone: string;
}

/** Every query of `lid_phones`: the LID ↔ number table of each account. */
@Injectable()
export class LidsRepository {
  constructor(private readonly tx: Transactions) {}

  /** Remembers pairs (the newest word wins: WhatsApp may move a LID to another number). */
  async learn(pairs: readonly LidPhone[], em: EntityManager = this.tx.manager): Promise<void> {
    const unique = new Map(pairs.map((p) => [`${p.userId}\u0000${p.lid}`, p]));
    if (unique.size === 0) return;
    const list = [...unique.values()].sort((a, b) =>
      a.userId === b.userId ? a.lid.localeCompare(b.lid) : a.userId.localeCompare(b.userId),
    );
    await rows(
      em,
      `INSERT INTO lid_phones (user_id, lid, phone)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
       ON CONFLICT (user_id, lid) DO UPDATE SET phone = excluded.phone, learned_at = now()
         WHERE lid_phones.phone <> excluded.phone`,
      [list.map((p) => p.userId), list.map((p) => p.lid), list.map((p) => p.phone)],
    );
  }

  /** The number behind a LID, as this account learned it. */
  async phoneOf(userId: string, lid: string, em: EntityManager = this.tx.manager): Promise<string | undefined> {
    const found = await row<{ phone: string }>(em, `SELECT phone FROM lid_phones WHERE user_id = $1 AND lid = $2`, [
      userId,
      lid,
    ]);
    return found?.phone;
  }

  /** How many pairs an account knows (the memory figure, and tests). */
  async count(userId: string): Promise<number> {
    const found = await row<{ n: number }>(
      this.tx.manager,
      `SELECT count(*)::int AS n FROM lid_phones WHERE user_id = $1`,
      [userId],
    );
    return found!.n;
  }

  /** Sign-out: the account's pairs go with its link. */
  async deleteByUser(userId: string): Promise<void> {
    await rows(this.tx.manager, `DELETE FROM lid_phones WHERE user_id = $1`, [userId]);
  }
}
