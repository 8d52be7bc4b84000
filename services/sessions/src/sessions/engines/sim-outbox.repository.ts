import { Inject, Injectable } from '@nestjs/common';
import { rows, SERVICE_ENV, StatementBatcher, Transactions } from '@bns/service-kit';
import { firstOfEachKey, ledgerBatching, userKey, type LedgerBatchEnv } from '../ledger-batching.js';
import type { SimulatorOutboxMedia } from '@bns/contracts';
import { SimOutboxEntity } from './sim-outbox.entity.js';

export interface SimDelivery {
  messageId: string;
  sentAt: Date;
}

interface Delivery {
  userId: string;
  key: string;
  from: string;
  to: string;
  text: string;
  media: SimulatorOutboxMedia | null;
}

/** Every query of `sim_outbox`, the simulated phone's side of the link. */
@Injectable()
export class SimOutboxRepository {
  /** The store of every simulated send, group-committed like the ledger's statements. */
  private readonly deliveries: StatementBatcher<Delivery, SimDelivery | undefined>;

  constructor(
    private readonly tx: Transactions,
    @Inject(SERVICE_ENV) env: LedgerBatchEnv,
  ) {
    this.deliveries = new StatementBatcher(
      { many: (d) => this.deliverMany(d), one: (d) => this.deliverOne(d) },
      ledgerBatching(env, 'sim_store'),
    );
  }

  /**
   * Stores the message once per key and answers that one copy, also to a repeat of the same key.
   * Undefined only while another send of the same key is committing at this very moment.
   */
  deliverOnce(
    userId: string,
    key: string,
    from: string,
    to: string,
    text: string,
    media: SimulatorOutboxMedia | null = null,
  ): Promise<SimDelivery | undefined> {
    return this.deliveries.run({ userId, key, from, to, text, media });
  }

  private async deliverOne(d: Delivery): Promise<SimDelivery | undefined> {
    const [row] = await rows<SimDelivery>(
      this.tx.manager,
      `WITH ins AS (
         INSERT INTO sim_outbox (user_id, idempotency_key, from_number, to_number, text, media)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb)
         ON CONFLICT (user_id, idempotency_key) DO NOTHING
         RETURNING message_id, sent_at)
       SELECT message_id::text AS "messageId", sent_at AS "sentAt" FROM ins
       UNION ALL
       SELECT message_id::text, sent_at FROM sim_outbox WHERE user_id = $1 AND idempotency_key = $2
       LIMIT 1`,
      [d.userId, d.key, d.from, d.to, d.text, d.media ? JSON.stringify(d.media) : null],
    );
    return row;
  }

  /**
   * deliverOne for many keys in one statement, with the same answer per key: the row it stored, else
   * the row stored before this statement began, else nothing (a send of the key not yet committed
   * then). A key twice in the batch is two sends at the same moment: the second gets the first's
   * answer when the row was already there, and nothing when the first is storing it.
   */
  private async deliverMany(ds: Delivery[]): Promise<(SimDelivery | undefined)[]> {
    const first = firstOfEachKey(ds);
    const unique = [...first.values()].map((i) => ds[i]!);
    // The SELECT from sim_outbox sees the table as it was when the statement began, not the rows of
    // `ins`. Rows are inserted in key order, so two batches that share keys never wait in a circle.
    const found = await rows<SimDelivery & { userId: string; key: string; stored: boolean }>(
      this.tx.manager,
      `WITH d AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS d(user_id, idempotency_key, from_number, to_number, text, media)),
       ins AS (
         INSERT INTO sim_outbox (user_id, idempotency_key, from_number, to_number, text, media)
         SELECT user_id, idempotency_key, from_number, to_number, text, media::jsonb FROM d ORDER BY user_id, idempotency_key
         ON CONFLICT (user_id, idempotency_key) DO NOTHING
         RETURNING user_id, idempotency_key, message_id, sent_at)
       SELECT user_id AS "userId", idempotency_key AS "key", message_id::text AS "messageId", sent_at AS "sentAt", true AS stored FROM ins
       UNION ALL
       SELECT o.user_id, o.idempotency_key, o.message_id::text, o.sent_at, false FROM sim_outbox o JOIN d USING (user_id, idempotency_key)`,
      [
        unique.map((d) => d.userId),
        unique.map((d) => d.key),
        unique.map((d) => d.from),
        unique.map((d) => d.to),
        unique.map((d) => d.text),
        unique.map((d) => (d.media ? JSON.stringify(d.media) : null)),
      ],
    );
    const byKey = new Map<string, { delivery: SimDelivery; stored: boolean }>();
    for (const f of found) {
      const k = userKey(f.userId, f.key);
      if (f.stored || !byKey.has(k))
        byKey.set(k, { delivery: { messageId: f.messageId, sentAt: f.sentAt }, stored: f.stored });
    }
    return ds.map((d, i) => {
      const k = userKey(d.userId, d.key);
      const answer = byKey.get(k);
      if (first.get(k) === i) return answer?.delivery;
      return answer && !answer.stored ? answer.delivery : undefined;
    });
  }

  /**
   * The user's newest `limit` messages sent since `since`, oldest first (their receipts are replayed on
   * restore). The newest: those are the ones whose receipt timers a restart cut short; the oldest of a
   * busy hour got theirs long ago.
   */
  async sentSince(userId: string, since: Date, limit: number): Promise<string[]> {
    const found = await this.tx.manager
      .getRepository(SimOutboxEntity)
      .createQueryBuilder('m')
      .select('m.messageId', 'messageId')
      .where('m.userId = :userId AND m.sentAt >= :since', { userId, since })
      .orderBy('m.sentAt', 'DESC')
      .limit(limit)
      .getRawMany<{ messageId: string }>();
    return found.map((f) => f.messageId).reverse();
  }

  list(userId: string): Promise<SimOutboxEntity[]> {
    return this.tx.manager
      .getRepository(SimOutboxEntity)
      .find({ where: { userId }, order: { sentAt: 'ASC', idempotencyKey: 'ASC' } });
  }
}
