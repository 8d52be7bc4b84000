import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSessions1763769600000 implements MigrationInterface {
  name = 'CreateSessions1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sessions.links (
        user_id text PRIMARY KEY,
        session_id uuid NOT NULL DEFAULT gen_random_uuid(),
        phone_number text,
        linked_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sessions.links`);
  }
}
