import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIntegrations1797000000000 implements MigrationInterface {
  name = 'CreateIntegrations1797000000000';

  async up(q: QueryRunner): Promise<void> {
    // Only the SHA-256 of a key's secret is kept: a key has 256 random bits, so a fast hash is as good
    // as a slow one and a lookup by hash is one index probe.
    await q.query(`
      CREATE TABLE integrations.api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        name varchar(100) NOT NULL,
        prefix text NOT NULL,
        secret_hash char(64) NOT NULL UNIQUE,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX api_keys_user_live_idx ON integrations.api_keys (user_id, created_at DESC) WHERE revoked_at IS NULL`,
    );

    await q.query(`
      CREATE TABLE integrations.webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        events text[] NOT NULL,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text CHECK (disabled_reason IN ('user', 'failing')),
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_user_idx ON integrations.webhook_endpoints (user_id, created_at)`);

    // One row per (endpoint, event): a redelivered event inserts nothing new, and every attempt of a
    // row carries its webhook_id. The queue is this table: due rows are claimed with SKIP LOCKED.
    await q.query(`
      CREATE TABLE integrations.webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES integrations.webhook_endpoints (id) ON DELETE CASCADE,
        user_id text NOT NULL,
        event_id text NOT NULL,
        webhook_id text NOT NULL,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_until timestamptz,
        last_attempt_at timestamptz,
        http_status integer,
        error text,
        latency_ms integer,
        created_at timestamptz NOT NULL,
        event_at timestamptz NOT NULL,
        UNIQUE (endpoint_id, event_id)
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due_idx ON integrations.webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_endpoint_idx ON integrations.webhook_deliveries (endpoint_id, created_at DESC)`,
    );

    // The last status seen of each campaign, to tell started / paused / resumed apart.
    await q.query(`
      CREATE TABLE integrations.campaign_states (
        user_id text NOT NULL,
        job_id text NOT NULL,
        status text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, job_id)
      )`);

    await q.query(`
      CREATE TABLE integrations.idempotency_keys (
        user_id text NOT NULL,
        key text NOT NULL,
        fingerprint char(64) NOT NULL,
        status integer,
        body text,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON integrations.idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE integrations.idempotency_keys`);
    await q.query(`DROP TABLE integrations.campaign_states`);
    await q.query(`DROP TABLE integrations.webhook_deliveries`);
    await q.query(`DROP TABLE integrations.webhook_endpoints`);
    await q.query(`DROP TABLE integrations.api_keys`);
  }
}
