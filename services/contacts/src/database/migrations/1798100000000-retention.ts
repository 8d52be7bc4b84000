import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention purge of conversation messages: each user's setting as the integrations service last
 * answered it (read before every purge), and an index to find old messages across users.
 */
export class Retention1798100000000 implements MigrationInterface {
  name = 'Retention1798100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contacts.retention_settings (
        user_id text PRIMARY KEY,
        days integer CHECK (days > 0)
      )`);
    await q.query(`CREATE INDEX messages_at_idx ON contacts.messages (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX contacts.messages_at_idx`);
    await q.query(`DROP TABLE contacts.retention_settings`);
  }
}
