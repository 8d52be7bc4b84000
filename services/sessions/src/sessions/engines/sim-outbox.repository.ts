import { Injectable } from '@nestjs/common';
import { rows, Transactions } from '@bns/service-kit';
import { SimOutboxEntity } from './sim-outbox.entity.js';

export interface SimDelivery {
  messageId: string;
  sentAt: Date;
}

/** Every query of `sim_outbox`, the simulated phone's side of the link. */
@Injectable()
export class SimOutboxRepository {
  constructor(private readonly tx: Transactions) {}

  /**
   * Stores the message once per key and answers that one copy, also to a repeat of the same key.
   * Undefined only while another send of the same key is committing at this very moment.
   */
  async deliverOnce(userId: string, key: string, from: string, to: string, text: string): Promise<SimDelivery | undefined> {
    const [row] = await rows<SimDelivery>(
      this.tx.manager,
      `WITH ins AS (
         INSERT INTO sim_outbox (user_id, idempotency_key, from_number, to_number, text)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, idempotency_key) DO NOTHING
         RETURNING message_id, sent_at)
       SELECT message_id::text AS "messageId", sent_at AS "sentAt" FROM ins
       UNION ALL
       SELECT message_id::text, sent_at FROM sim_outbox WHERE user_id = $1 AND idempotency_key = $2
       LIMIT 1`,
      [userId, key, from, to, text],
    );
    return row;
  }

  /** The user's messages sent since `since`, oldest first, at most `limit` (their receipts are replayed on restore). */
  async sentSince(userId: string, since: Date, limit: number): Promise<string[]> {
    const found = await this.tx.manager
      .getRepository(SimOutboxEntity)
      .createQueryBuilder('m')
      .select('m.messageId', 'messageId')
      .where('m.userId = :userId AND m.sentAt >= :since', { userId, since })
      .orderBy('m.sentAt', 'ASC')
      .limit(limit)
      .getRawMany<{ messageId: string }>();
    return found.map((f) => f.messageId);
  }

  list(userId: string): Promise<SimOutboxEntity[]> {
    return this.tx.manager.getRepository(SimOutboxEntity).find({ where: { userId }, order: { sentAt: 'ASC', idempotencyKey: 'ASC' } });
  }
}
