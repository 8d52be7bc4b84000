import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention purge of the read model's message text: each user's setting as the integrations service
 * last answered it (read before every purge), and indexes that find what still holds text by age.
 */
export class Retention1798100000000 implements MigrationInterface {
  name = 'Retention1798100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.retention_settings (
        user_id text PRIMARY KEY,
        days integer CHECK (days > 0)
      )`);
    await q.query(
      `CREATE INDEX messages_text_kept_idx ON dashboard.messages (created_at) WHERE content <> '' OR reply IS NOT NULL`,
    );
    await q.query(`CREATE INDEX inbound_messages_received_idx ON dashboard.inbound_messages (received_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX dashboard.inbound_messages_received_idx`);
    await q.query(`DROP INDEX dashboard.messages_text_kept_idx`);
    await q.query(`DROP TABLE dashboard.retention_settings`);
  }
}
