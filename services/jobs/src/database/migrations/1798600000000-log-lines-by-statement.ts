import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A job's log lines lose their per-row foreign key to `jobs.jobs`, as its recipients did
 * (CascadeByStatement1798050000000): the statement-level trigger that deletes a job's recipients with
 * it deletes its log lines too.
 *
 * The key checked every line against its job with a lookup and a row lock of its own, one per sent
 * message ("Message sent to …"). What it guarded, a line never outliving its job, the statement that
 * writes lines now does itself: it locks each of its jobs once (FOR KEY SHARE, as the key did) and
 * refuses lines whose job is gone (`JobLogsRepository.addMany`).
 */
export class LogLinesByStatement1798600000000 implements MigrationInterface {
  name = 'LogLinesByStatement1798600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.job_logs DROP CONSTRAINT job_logs_job_id_fkey`);
    await q.query(`
      CREATE OR REPLACE FUNCTION jobs.delete_job_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM jobs.job_logs l USING gone g WHERE l.job_id = g.id;
        DELETE FROM jobs.job_recipients r USING gone g WHERE r.job_id = g.id;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION jobs.delete_job_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM jobs.job_recipients r USING gone g WHERE r.job_id = g.id;
        RETURN NULL;
      END $$`);
    // Lines a job no longer has go first: the key would refuse them.
    await q.query(`DELETE FROM jobs.job_logs l WHERE NOT EXISTS (SELECT 1 FROM jobs.jobs j WHERE j.id = l.job_id)`);
    await q.query(`
      ALTER TABLE jobs.job_logs ADD CONSTRAINT job_logs_job_id_fkey
        FOREIGN KEY (job_id) REFERENCES jobs.jobs (id) ON DELETE CASCADE`);
  }
}
