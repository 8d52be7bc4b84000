import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention purge: each user's setting as the integrations service last answered it (read before
 * every purge), and on a job, the period after which its message text and per-recipient rows were
 * removed (its counts stay). The partial index finds the finished jobs still holding details.
 */
export class Retention1798100000000 implements MigrationInterface {
  name = 'Retention1798100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.retention_settings (
        user_id text PRIMARY KEY,
        days integer CHECK (days > 0)
      )`);
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN details_purged_after_days integer`);
    await q.query(
      `CREATE INDEX jobs_details_kept_idx ON jobs.jobs (finished_at) WHERE details_purged_after_days IS NULL AND finished_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs.jobs_details_kept_idx`);
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN details_purged_after_days`);
    await q.query(`DROP TABLE jobs.retention_settings`);
  }
}
