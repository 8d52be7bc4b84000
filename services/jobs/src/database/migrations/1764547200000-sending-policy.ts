import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sending policy per account, scheduled and paused jobs, and the lane counters the policy needs
 * (messages today, the run since the last long pause, warm-up start, back-off after WhatsApp pushback).
 */
export class SendingPolicy1764547200000 implements MigrationInterface {
  name = 'SendingPolicy1764547200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.policies (
        user_id text PRIMARY KEY,
        preset text NOT NULL CHECK (preset IN ('standard', 'careful', 'custom')),
        delay_ms integer NOT NULL CHECK (delay_ms >= 0),
        jitter_ms integer NOT NULL CHECK (jitter_ms >= 0),
        pause_every integer CHECK (pause_every > 0),
        pause_ms integer CHECK (pause_ms > 0),
        daily_cap integer CHECK (daily_cap > 0),
        -- The sending window as {start, end, days}; NULL = any time.
        send_window jsonb,
        time_zone text NOT NULL,
        warm_up boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT jobs_status_check`);
    await q.query(`
      ALTER TABLE jobs.jobs
        ADD CONSTRAINT jobs_status_check CHECK (status IN ('queued', 'scheduled', 'running', 'paused', 'completed', 'failed', 'cancelled')),
        ADD COLUMN start_at timestamptz,
        ADD COLUMN paused_reason text CHECK (paused_reason IN ('user', 'window', 'daily_cap', 'unlinked', 'rate_limited')),
        ADD COLUMN resumes_at timestamptz,
        ADD COLUMN estimated_finish_at timestamptz`);
    await q.query(`DROP INDEX jobs.jobs_user_active_idx`);
    await q.query(
      `CREATE INDEX jobs_user_active_idx ON jobs.jobs (user_id, created_at, id) WHERE status IN ('queued', 'scheduled', 'running', 'paused')`,
    );

    // The planned gap after each message (pace, plus a long pause when one followed): what pacing is measured against.
    await q.query(`ALTER TABLE jobs.job_recipients ADD COLUMN paced_ms integer`);

    await q.query(`
      ALTER TABLE jobs.lanes
        ADD COLUMN day_key text,
        ADD COLUMN day_count integer NOT NULL DEFAULT 0,
        ADD COLUMN run_count integer NOT NULL DEFAULT 0,
        ADD COLUMN warm_up_from text,
        ADD COLUMN engine_failures smallint NOT NULL DEFAULT 0,
        ADD COLUMN backoff_level smallint NOT NULL DEFAULT 0,
        ADD COLUMN backoff_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE jobs.lanes DROP COLUMN day_key, DROP COLUMN day_count, DROP COLUMN run_count, DROP COLUMN warm_up_from,
        DROP COLUMN engine_failures, DROP COLUMN backoff_level, DROP COLUMN backoff_at`);
    await q.query(`ALTER TABLE jobs.job_recipients DROP COLUMN paced_ms`);
    await q.query(`DROP INDEX jobs.jobs_user_active_idx`);
    await q.query(`UPDATE jobs.jobs SET status = 'queued' WHERE status IN ('scheduled', 'paused')`);
    await q.query(`
      ALTER TABLE jobs.jobs DROP CONSTRAINT jobs_status_check,
        DROP COLUMN start_at, DROP COLUMN paused_reason, DROP COLUMN resumes_at, DROP COLUMN estimated_finish_at`);
    await q.query(
      `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled'))`,
    );
    await q.query(
      `CREATE INDEX jobs_user_active_idx ON jobs.jobs (user_id, created_at, id) WHERE status IN ('queued', 'running')`,
    );
    await q.query(`DROP TABLE jobs.policies`);
  }
}
