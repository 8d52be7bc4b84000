import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { row, rows, SERVICE_ENV, StatementBatcher, Transactions } from '@bns/service-kit';
import { ledgerBatching, type LedgerBatchEnv } from './ledger-batching.js';

/** One LID ↔ number pair an account learned. */
export interface LidPhone {
  userId: string;
  lid: string;
  phone: string;
}

/** Every query of `lid_phones`: the LID ↔ number table of each account. */
@Injectable()
export class LidsRepository {
  /** Pairs the engine names one at a time (one per send, at a campaign's rate): group-committed. */
  private readonly pairs: StatementBatcher<LidPhone, void>;

  constructor(
    private readonly tx: Transactions,
    @Inject(SERVICE_ENV) env: LedgerBatchEnv,
  ) {
    this.pairs = new StatementBatcher<LidPhone, void>(
      {
        many: async (items) => {
          await this.learn(items);
          return items.map(() => undefined);
        },
        one: (item) => this.learn([item]),
      },
      ledgerBatching(env, 'lid_pairs'),
    );
  }

  /**
   * One pair as the engine names it: pairs that come while a statement runs share the next one (one
   * statement and one commit for many sends). Resolves once the pair is stored.
   */
  learnOne(pair: LidPhone): Promise<void> {
    return this.pairs.run(pair);
  }

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
