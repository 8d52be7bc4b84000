import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The simulated phone records what attachment a message carried (kind, hash, size, name; never the bytes). */
export class SimOutboxMedia1797800000000 implements MigrationInterface {
  name = 'SimOutboxMedia1797800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sim_outbox ADD COLUMN media jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sim_outbox DROP COLUMN media`);
  }
}
