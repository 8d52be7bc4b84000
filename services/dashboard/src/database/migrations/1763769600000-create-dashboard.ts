import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The dashboard's read model. Everything but user_preferences is derived from the EVENTS stream and
 * could be rebuilt by replaying it.
 */
export class CreateDashboard1763769600000 implements MigrationInterface {
  name = 'CreateDashboard1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.user_preferences (
        user_id text PRIMARY KEY,
        auto_login_message_enabled boolean NOT NULL DEFAULT true,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    // Ids of events already applied, written in the transaction that applies them: a redelivery or a
    // duplicate publish is skipped. Pruned after the stream's retention, when nothing can redeliver it.
    await q.query(`
      CREATE TABLE dashboard.applied_events (
        event_id text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX applied_events_applied_at_idx ON dashboard.applied_events (applied_at)`);

    await q.query(`
      CREATE TABLE dashboard.messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id text NOT NULL,
        idempotency_key text NOT NULL,
        job_id text NOT NULL,
        recipient text NOT NULL,
        content text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'delivered', 'read')),
        -- The first of sent/failed the message reached: counted once in monthly usage, never recounted.
        outcome text CHECK (outcome IN ('sent', 'failed')),
        error text,
        created_at timestamptz NOT NULL,
        sent_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT messages_user_key_uq UNIQUE (user_id, idempotency_key)
      )`);
    // The dashboard's "recent messages": one index range scan per user, newest first.
    await q.query(`CREATE INDEX messages_user_recent_idx ON dashboard.messages (user_id, created_at DESC, id DESC)`);

    // Per-user counts by status, kept in step with messages so stats never scan a user's history.
    await q.query(`
      CREATE TABLE dashboard.user_totals (
        user_id text PRIMARY KEY,
        pending bigint NOT NULL DEFAULT 0,
        sent bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0,
        delivered bigint NOT NULL DEFAULT 0,
        read bigint NOT NULL DEFAULT 0
      )`);

    await q.query(`
      CREATE TABLE dashboard.monthly_usage (
        user_id text NOT NULL,
        month date NOT NULL,
        sent_count integer NOT NULL DEFAULT 0,
        failed_count integer NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, month)
      )`);

    // The last applied link state per user: a state event older than it is stale and ignored.
    await q.query(`
      CREATE TABLE dashboard.link_states (
        user_id text PRIMARY KEY,
        state text NOT NULL,
        at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE dashboard.sessions (
        user_id text NOT NULL,
        session_id text NOT NULL,
        phone_number text,
        active boolean NOT NULL,
        connected_at timestamptz,
        disconnected_at timestamptz,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, session_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'sessions',
      'link_states',
      'monthly_usage',
      'user_totals',
      'messages',
      'applied_events',
      'user_preferences',
    ]) {
      await q.query(`DROP TABLE dashboard.${table}`);
    }
  }
}
