import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaign results: idempotent starts, recipients' variables for the report, receipts
 * folded in from events and a job's receipt counts. New tables only, so this migrates independently
 * of the other changes to `jobs` and `job_recipients`.
 */
export class CampaignResults1764000000000 implements MigrationInterface {
  name = 'CampaignResults1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.job_starts (
        user_id text NOT NULL,
        idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 200),
        request_hash text NOT NULL,
        -- Deferred: the key is claimed first in the start's transaction, the job row follows.
        job_id uuid NOT NULL REFERENCES jobs.jobs (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX job_starts_job_idx ON jobs.job_starts (job_id)`);

    await q.query(`
      CREATE TABLE jobs.recipient_variables (
        job_id uuid NOT NULL,
        seq integer NOT NULL,
        variables jsonb NOT NULL,
        PRIMARY KEY (job_id, seq),
        -- By job, not by recipient: 50,000 rows are checked against one parent row, not 50,000.
        FOREIGN KEY (job_id) REFERENCES jobs.jobs (id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE jobs.recipient_receipts (
        job_id uuid NOT NULL,
        seq integer NOT NULL,
        delivered_at timestamptz,
        read_at timestamptz,
        replied_at timestamptz,
        PRIMARY KEY (job_id, seq),
        FOREIGN KEY (job_id, seq) REFERENCES jobs.job_recipients (job_id, seq) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE jobs.job_receipts (
        job_id uuid PRIMARY KEY REFERENCES jobs.jobs (id) ON DELETE CASCADE,
        delivered integer NOT NULL DEFAULT 0,
        read integer NOT NULL DEFAULT 0,
        replied integer NOT NULL DEFAULT 0
      )`);

    // A reply is matched to the newest message sent to its number: by user, then number.
    await q.query(
      `CREATE INDEX job_recipients_phone_sent_idx ON jobs.job_recipients (phone, done_at DESC) WHERE state = 'sent'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs.job_recipients_phone_sent_idx`);
    await q.query(`DROP TABLE jobs.job_receipts`);
    await q.query(`DROP TABLE jobs.recipient_receipts`);
    await q.query(`DROP TABLE jobs.recipient_variables`);
    await q.query(`DROP TABLE jobs.job_starts`);
  }
}
