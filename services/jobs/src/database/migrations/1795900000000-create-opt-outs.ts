import type { MigrationInterface, QueryRunner } from 'typeorm';
import { OPT_OUT_REASONS, SKIP_REASONS } from '@bns/contracts';

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** Opt-outs: the suppression list, its keyword settings, the not-on-WhatsApp memory, job skips and their count. */
export class CreateOptOuts1795900000000 implements MigrationInterface {
  name = 'CreateOptOuts1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.opt_outs (
        user_id text NOT NULL,
        -- 8 Hong Kong digits, normalised like a job's recipients.
        phone text NOT NULL,
        reason text NOT NULL CHECK (reason IN (${list(OPT_OUT_REASONS)})),
        -- The inbound event that added it (keyword), so a redelivery confirms once, with the same key.
        source_event_id text,
        at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        PRIMARY KEY (user_id, phone)
      )`);
    // Newest first, with the phone as the tie-breaker of the paging cursor.
    await q.query(`CREATE INDEX opt_outs_user_at_idx ON jobs.opt_outs (user_id, at DESC, phone DESC)`);

    await q.query(`
      CREATE TABLE jobs.opt_out_settings (
        user_id text PRIMARY KEY,
        keywords text[] NOT NULL,
        confirmation_enabled boolean NOT NULL DEFAULT false,
        confirmation_text text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE jobs.not_on_whatsapp (
        user_id text NOT NULL,
        phone text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, phone)
      )`);

    // Recipients a job did not send to. Skipped at start: never queued; skipped mid-job: moved here
    // from job_recipients in the transaction that would have taken them for sending.
    await q.query(`
      CREATE TABLE jobs.job_skips (
        job_id uuid NOT NULL REFERENCES jobs.jobs (id) ON DELETE CASCADE,
        phone text NOT NULL,
        reason text NOT NULL CHECK (reason IN (${list(SKIP_REASONS)})),
        at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        PRIMARY KEY (job_id, phone)
      )`);
    await q.query(`CREATE INDEX job_skips_job_at_idx ON jobs.job_skips (job_id, at)`);
    // How many of a job's recipients were skipped: a counter beside sent and failed, so the job
    // completes when sent + failed + skipped reaches total and every progress report carries it.
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN skipped integer NOT NULL DEFAULT 0 CHECK (skipped >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN skipped`);
    await q.query(`DROP TABLE jobs.job_skips`);
    await q.query(`DROP TABLE jobs.not_on_whatsapp`);
    await q.query(`DROP TABLE jobs.opt_out_settings`);
    await q.query(`DROP TABLE jobs.opt_outs`);
  }
}
