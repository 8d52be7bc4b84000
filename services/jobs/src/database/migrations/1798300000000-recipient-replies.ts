import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What recipients wrote back (`recipient_replies`), one row per reply, on the recipient it answers
 * (the newest message the account sent that number before the reply). The reply's id (its event id)
 * makes a redelivered event one row. Only written when a reply arrives, so a campaign nobody answers
 * costs nothing here. Skipped recipients keep the variables their row carried (`job_skips.variables`),
 * so the export still shows whom they were.
 */
export class RecipientReplies1798300000000 implements MigrationInterface {
  name = 'RecipientReplies1798300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.recipient_replies (
        job_id uuid NOT NULL REFERENCES jobs.jobs (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        reply_id text NOT NULL,
        at timestamptz NOT NULL,
        text text NOT NULL,
        PRIMARY KEY (job_id, seq, reply_id)
      )`);
    await q.query(`ALTER TABLE jobs.job_skips ADD COLUMN variables jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.job_skips DROP COLUMN variables`);
    await q.query(`DROP TABLE jobs.recipient_replies`);
  }
}
