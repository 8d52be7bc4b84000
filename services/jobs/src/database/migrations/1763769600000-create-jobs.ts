import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateJobs1763769600000 implements MigrationInterface {
  name = 'CreateJobs1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.jobs (
        id uuid PRIMARY KEY,
        user_id text NOT NULL,
        client_id text,
        status text NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
        message text NOT NULL,
        total integer NOT NULL CHECK (total > 0),
        sent integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        error text,
        delay_ms integer NOT NULL,
        estimated_minutes integer NOT NULL,
        -- First time a send found the account unlinked; cleared by the next success.
        unlinked_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    // The worker's question: the oldest unfinished job of a user (one account sends one job at a time).
    await q.query(
      `CREATE INDEX jobs_user_active_idx ON jobs.jobs (user_id, created_at, id) WHERE status IN ('queued', 'running')`,
    );
    await q.query(`CREATE INDEX jobs_user_created_idx ON jobs.jobs (user_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE jobs.job_recipients (
        job_id uuid NOT NULL REFERENCES jobs.jobs (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        phone text NOT NULL,
        -- The personalised text; NULL when it is the job's message as it is (most jobs: saves space).
        text text,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
        attempts smallint NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        error text,
        done_at timestamptz,
        PRIMARY KEY (job_id, seq),
        CONSTRAINT job_recipients_job_phone_key UNIQUE (job_id, phone)
      )`);
    await q.query(
      `CREATE INDEX job_recipients_open_idx ON jobs.job_recipients (job_id, seq) WHERE state IN ('pending', 'sending')`,
    );
    await q.query(
      `CREATE INDEX job_recipients_done_idx ON jobs.job_recipients (job_id, state, done_at) WHERE state IN ('sent', 'failed')`,
    );

    // One lane per account: where its pacing lives (so restarts and other replicas respect it) and
    // which worker sends for it right now.
    await q.query(`
      CREATE TABLE jobs.lanes (
        user_id text PRIMARY KEY,
        active boolean NOT NULL DEFAULT true,
        next_send_at timestamptz NOT NULL DEFAULT now(),
        holder text,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX lanes_due_idx ON jobs.lanes (next_send_at) WHERE active`);

    await q.query(`
      CREATE TABLE jobs.workers (
        id text PRIMARY KEY,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE jobs.job_logs (
        id bigserial PRIMARY KEY,
        job_id uuid NOT NULL REFERENCES jobs.jobs (id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('info', 'success', 'warning', 'error')),
        message text NOT NULL,
        -- Millisecond precision: what the client sends back as ?since= must compare exactly.
        at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    await q.query(`CREATE INDEX job_logs_job_at_idx ON jobs.job_logs (job_id, at, id)`);

    // Transactional outbox: events are written with the state change they report and published after
    // commit; what a crash left behind is published by the sweeper.
    await q.query(`
      CREATE TABLE jobs.outbox (
        id bigserial PRIMARY KEY,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE jobs.outbox`);
    await q.query(`DROP TABLE jobs.job_logs`);
    await q.query(`DROP TABLE jobs.workers`);
    await q.query(`DROP TABLE jobs.lanes`);
    await q.query(`DROP TABLE jobs.job_recipients`);
    await q.query(`DROP TABLE jobs.jobs`);
  }
}
