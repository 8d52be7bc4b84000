import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sends WhatsApp accepted and then refused: a job may wait with `paused_reason = 'refused'` (WhatsApp is
 * refusing messages to new contacts; only the user resumes it), and each account counts its refusals
 * in a row to numbers it never talked to.
 */
export class RefusedSends1797200000000 implements MigrationInterface {
  name = 'RefusedSends1797200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT IF EXISTS jobs_paused_reason_check`);
    await q.query(
      `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_paused_reason_check
         CHECK (paused_reason IN ('user', 'window', 'daily_cap', 'unlinked', 'rate_limited', 'refused'))`,
    );
    await q.query(`
      CREATE TABLE jobs.refusal_streaks (
        user_id text PRIMARY KEY,
        -- Refusals to never-talked-to numbers since the account's last delivered message (or pause).
        in_row integer NOT NULL DEFAULT 0,
        last_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE jobs.refusal_streaks`);
    await q.query(`UPDATE jobs.jobs SET paused_reason = 'user' WHERE paused_reason = 'refused'`);
    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT IF EXISTS jobs_paused_reason_check`);
    await q.query(
      `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_paused_reason_check
         CHECK (paused_reason IN ('user', 'window', 'daily_cap', 'unlinked', 'rate_limited'))`,
    );
  }
}
