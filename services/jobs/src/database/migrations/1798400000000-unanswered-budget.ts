import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The unanswered budget: each account counts, by day in its policy's time zone, the messages it sent to
 * numbers that never replied (`lanes.unanswered`, a small JSON object of the last 62 days, updated by
 * the statement that already records each send and books the lane: no write of its own). Numbers that
 * replied are `repliers` (one row per account and number, written by the first reply); that first reply
 * takes the number's earlier sends off the days they were counted in. A policy may cap the 30 days
 * (`unanswered_limit`): at it, campaigns wait (`paused_reason = 'unanswered'`).
 */
export class UnansweredBudget1798400000000 implements MigrationInterface {
  name = 'UnansweredBudget1798400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.lanes ADD COLUMN unanswered jsonb NOT NULL DEFAULT '{}'`);
    await q.query(`
      CREATE TABLE jobs.repliers (
        user_id text NOT NULL,
        phone text NOT NULL,
        at timestamptz NOT NULL,
        PRIMARY KEY (user_id, phone)
      )`);
    await q.query(`ALTER TABLE jobs.policies ADD COLUMN unanswered_limit integer CHECK (unanswered_limit > 0)`);
    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT IF EXISTS jobs_paused_reason_check`);
    await q.query(
      `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_paused_reason_check
         CHECK (paused_reason IN ('user', 'window', 'daily_cap', 'unlinked', 'rate_limited', 'refused', 'unanswered'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE jobs.jobs SET paused_reason = 'daily_cap' WHERE paused_reason = 'unanswered'`);
    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT IF EXISTS jobs_paused_reason_check`);
    await q.query(
      `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_paused_reason_check
         CHECK (paused_reason IN ('user', 'window', 'daily_cap', 'unlinked', 'rate_limited', 'refused'))`,
    );
    await q.query(`ALTER TABLE jobs.policies DROP COLUMN unanswered_limit`);
    await q.query(`DROP TABLE jobs.repliers`);
    await q.query(`ALTER TABLE jobs.lanes DROP COLUMN unanswered`);
  }
}
