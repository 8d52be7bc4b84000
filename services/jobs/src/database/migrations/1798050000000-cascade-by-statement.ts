import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A job's recipients and their variables lose their per-row foreign keys to `jobs.jobs`; a job's
 * deletion still takes them with it, by one statement-level trigger instead of a cascade row by row.
 *
 * A foreign key checks every inserted row against its parent (a lookup that locks the job's row
 * FOR KEY SHARE): a 50,000-recipient start paid 50,000 lookups for `job_recipients` and 50,000 more for
 * `recipient_variables`, all against the one job row the same transaction had just inserted. Both
 * tables are written only by a job's start (`RecipientsRepository.insertAll`, the start's variables), in
 * the transaction that inserts the job first, so no row can name a job that does not exist; what the
 * keys still did was the cascade, which the trigger keeps (one DELETE per table for all the jobs a
 * statement deleted, rather than one per row).
 */
export class CascadeByStatement1798050000000 implements MigrationInterface {
  name = 'CascadeByStatement1798050000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.job_recipients DROP CONSTRAINT job_recipients_job_id_fkey`);
    await q.query(`ALTER TABLE jobs.recipient_variables DROP CONSTRAINT recipient_variables_job_id_fkey`);
    await q.query(`
      CREATE FUNCTION jobs.delete_job_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM jobs.recipient_variables v USING gone g WHERE v.job_id = g.id;
        DELETE FROM jobs.job_recipients r USING gone g WHERE r.job_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER jobs_delete_recipients AFTER DELETE ON jobs.jobs
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION jobs.delete_job_recipients()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER jobs_delete_recipients ON jobs.jobs`);
    await q.query(`DROP FUNCTION jobs.delete_job_recipients()`);
    await q.query(`
      ALTER TABLE jobs.recipient_variables ADD CONSTRAINT recipient_variables_job_id_fkey
        FOREIGN KEY (job_id) REFERENCES jobs.jobs (id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE jobs.job_recipients ADD CONSTRAINT job_recipients_job_id_fkey
        FOREIGN KEY (job_id) REFERENCES jobs.jobs (id) ON DELETE CASCADE`);
  }
}
