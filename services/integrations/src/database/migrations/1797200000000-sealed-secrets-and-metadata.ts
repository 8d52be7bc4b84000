import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SealedSecretsAndMetadata1797200000000 implements MigrationInterface {
  name = 'SealedSecretsAndMetadata1797200000000';

  async up(q: QueryRunner): Promise<void> {
    // One row sealed under INTEGRATIONS_SECRET_KEY: the service opens it at start, so a different key
    // stops it there instead of at the first delivery. The endpoints' secrets already stored in plain
    // text are sealed by the service at its first start with a key (a migration has no key).
    await q.query(`
      CREATE TABLE integrations.secret_key_check (
        id smallint PRIMARY KEY CHECK (id = 1),
        sealed text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    // The metadata a /v1 message was sent with, echoed by GET /v1/messages/{id} and its message.* webhooks.
    await q.query(`
      CREATE TABLE integrations.message_metadata (
        user_id text NOT NULL,
        message_id text NOT NULL,
        metadata jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, message_id)
      )`);
    await q.query(`CREATE INDEX message_metadata_created_idx ON integrations.message_metadata (created_at)`);

    // How many of a campaign's skipped recipients were turned into message.skipped webhooks already.
    await q.query(`ALTER TABLE integrations.campaign_states ADD COLUMN skipped_seen integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE integrations.campaign_states DROP COLUMN skipped_seen`);
    await q.query(`DROP TABLE integrations.message_metadata`);
    await q.query(`DROP TABLE integrations.secret_key_check`);
  }
}
