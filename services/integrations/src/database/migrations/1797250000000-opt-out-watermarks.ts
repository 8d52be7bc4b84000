import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OptOutWatermarks1797250000000 implements MigrationInterface {
  name = 'OptOutWatermarks1797250000000';

  async up(q: QueryRunner): Promise<void> {
    // Up to when each user's opt-out list was turned into contact.opted_out webhooks: a sweep reads the
    // list (over NATS, newest first) back to here, so a notice missed while no replica listened is caught up.
    await q.query(`
      CREATE TABLE integrations.opt_out_watermarks (
        user_id text PRIMARY KEY,
        seen_until timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE integrations.opt_out_watermarks`);
  }
}
