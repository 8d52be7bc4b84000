import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSessions1763769600000 implements MigrationInterface {
  name = 'CreateSessions1763769600000';

  async up(q: QueryRunner): Promise<void> {
    // One row per linked account: what a replica needs to restore the link after a restart or resize.
    await q.query(`
      CREATE TABLE sessions.links (
        user_id text PRIMARY KEY,
        session_id uuid NOT NULL DEFAULT gen_random_uuid(),
        engine text NOT NULL,
        phone_number text NOT NULL,
        linked_at timestamptz NOT NULL DEFAULT now(),
        welcome_sent_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // The send ledger: one row per idempotency key, so a retried send answers the first result.
    await q.query(`
      CREATE TABLE sessions.sends (
        user_id text NOT NULL,
        idempotency_key text NOT NULL,
        kind text NOT NULL DEFAULT 'job',
        status text NOT NULL,
        message_id text,
        to_number text NOT NULL,
        text text NOT NULL,
        error_code text,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        PRIMARY KEY (user_id, idempotency_key),
        CONSTRAINT sends_status_check CHECK (status IN ('sending', 'sent', 'failed'))
      )`);
    await q.query(`CREATE INDEX sends_message_id_idx ON sessions.sends (message_id) WHERE message_id IS NOT NULL`);
    // The simulated phone's side: what "arrived" on WhatsApp. Survives restarts like a real phone would.
    await q.query(`
      CREATE TABLE sessions.sim_outbox (
        user_id text NOT NULL,
        idempotency_key text NOT NULL,
        message_id uuid NOT NULL DEFAULT gen_random_uuid(),
        from_number text NOT NULL,
        to_number text NOT NULL,
        text text NOT NULL,
        sent_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX sim_outbox_user_sent_idx ON sessions.sim_outbox (user_id, sent_at)`);
    // whatsapp-web.js RemoteAuth profile zips, one per RemoteAuth session name.
    await q.query(`
      CREATE TABLE sessions.webjs_auth (
        session text PRIMARY KEY,
        user_id text NOT NULL,
        data bytea NOT NULL,
        size_bytes integer NOT NULL,
        saved_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webjs_auth_user_idx ON sessions.webjs_auth (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sessions.webjs_auth`);
    await q.query(`DROP TABLE sessions.sim_outbox`);
    await q.query(`DROP TABLE sessions.sends`);
    await q.query(`DROP TABLE sessions.links`);
  }
}
