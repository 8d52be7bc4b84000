import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateDashboard1763769600000 implements MigrationInterface {
  name = 'CreateDashboard1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.user_preferences (
        user_id text PRIMARY KEY,
        auto_login_message_enabled boolean NOT NULL DEFAULT true,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dashboard.user_preferences`);
  }
}
