import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Skipped is an outcome of its own (opted out, not on WhatsApp): a job's count of recipients it did
 * not send to, as its progress events say it, one row per job. The count only grows, so a late or
 * redelivered event changes nothing; the dashboard sums the rows (all time, and the current month by
 * the month the job first reported skips in).
 */
export class JobSkips1798300000000 implements MigrationInterface {
  name = 'JobSkips1798300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.job_skips (
        user_id text NOT NULL,
        job_id text NOT NULL,
        month date NOT NULL,
        skipped integer NOT NULL CHECK (skipped >= 0),
        PRIMARY KEY (user_id, job_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dashboard.job_skips`);
  }
}
