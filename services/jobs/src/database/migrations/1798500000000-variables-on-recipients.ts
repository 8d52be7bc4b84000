import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A personalised recipient's variables live on its `job_recipients` row (`variables`), written by the
 * statement that stores the recipient, instead of in a table of their own (`recipient_variables`).
 *
 * A 50,000-recipient personalised start wrote 50,000 more rows and index entries in a second
 * statement, about as costly as storing the recipients themselves; the report read them back through
 * a join. The job says whether it was personalised (`jobs.personalised`), which the history showed by
 * probing the variables table.
 */
export class VariablesOnRecipients1798500000000 implements MigrationInterface {
  name = 'VariablesOnRecipients1798500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.job_recipients ADD COLUMN variables jsonb`);
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN personalised boolean NOT NULL DEFAULT false`);
    await q.query(`
      UPDATE jobs.job_recipients r SET variables = v.variables
        FROM jobs.recipient_variables v WHERE v.job_id = r.job_id AND v.seq = r.seq`);
    await q.query(`
      UPDATE jobs.jobs j SET personalised = true
       WHERE EXISTS (SELECT 1 FROM jobs.recipient_variables v WHERE v.job_id = j.id)`);
    await q.query(`
      CREATE OR REPLACE FUNCTION jobs.delete_job_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM jobs.job_recipients r USING gone g WHERE r.job_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`DROP TABLE jobs.recipient_variables`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.recipient_variables (
        job_id uuid NOT NULL,
        seq integer NOT NULL,
        variables jsonb NOT NULL,
        PRIMARY KEY (job_id, seq)
      )`);
    await q.query(`
      INSERT INTO jobs.recipient_variables (job_id, seq, variables)
      SELECT job_id, seq, variables FROM jobs.job_recipients WHERE variables IS NOT NULL`);
    await q.query(`
      CREATE OR REPLACE FUNCTION jobs.delete_job_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM jobs.recipient_variables v USING gone g WHERE v.job_id = g.id;
        DELETE FROM jobs.job_recipients r USING gone g WHERE r.job_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN personalised`);
    await q.query(`ALTER TABLE jobs.job_recipients DROP COLUMN variables`);
  }
}
