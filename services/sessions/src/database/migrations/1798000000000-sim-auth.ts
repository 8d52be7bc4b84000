import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The simulated engine's login (its stand-in for WhatsApp's keys and the account's number), one per
 * user, sealed at rest like the webjs engine's profiles: what a restart restores a simulated link from.
 */
export class SimAuth1798000000000 implements MigrationInterface {
  name = 'SimAuth1798000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sessions.sim_auth (
        user_id text PRIMARY KEY,
        data bytea NOT NULL,
        saved_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sessions.sim_auth`);
  }
}
