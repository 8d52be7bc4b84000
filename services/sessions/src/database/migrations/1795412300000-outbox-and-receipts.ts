import type { MigrationInterface, QueryRunner } from 'typeorm';
import { outboxTableSql } from '@bns/service-kit';

/**
 * Durable events: delivered/read receipts and inbound messages are written to `sessions.outbox` in the
 * same transaction as the state change (a send's `receipt`), and published to JetStream after commit.
 */
export class OutboxAndReceipts1795412300000 implements MigrationInterface {
  name = 'OutboxAndReceipts1795412300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(outboxTableSql('sessions'));
    // The furthest receipt WhatsApp reported for a sent message; a repeated or older ack changes nothing.
    await q.query(
      `ALTER TABLE sessions.sends ADD COLUMN receipt text CHECK (receipt IN ('failed', 'delivered', 'read'))`,
    );
    await q.query(`ALTER TABLE sessions.sends ADD COLUMN receipt_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sends DROP COLUMN receipt_at`);
    await q.query(`ALTER TABLE sessions.sends DROP COLUMN receipt`);
    await q.query(`DROP TABLE sessions.outbox`);
  }
}
