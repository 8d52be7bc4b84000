import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Account deletions, kept after the account's data is gone: by a hash of the user id (`user_key`), the id
 * itself only while the deletion runs, so once it is done a scan for the id finds nothing. At most one running per user. And each user's
 * retention setting (days; null keeps message details until the user deletes them).
 */
export class AccountDeletions1797300000000 implements MigrationInterface {
  name = 'AccountDeletions1797300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE integrations.account_deletions (
        deletion_id uuid PRIMARY KEY,
        user_key text NOT NULL,
        -- The user id only while the deletion runs (its request may need publishing again); cleared when done.
        pending_user_id text,
        requested_at timestamptz NOT NULL,
        finished_at timestamptz,
        services jsonb NOT NULL DEFAULT '{}'::jsonb
      )`);
    await q.query(
      `CREATE INDEX account_deletions_user_idx ON integrations.account_deletions (user_key, requested_at DESC)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX account_deletions_running_uq ON integrations.account_deletions (user_key) WHERE finished_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE integrations.retention_settings (
        user_id text PRIMARY KEY,
        days integer CHECK (days IN (30, 90, 365)),
        updated_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE integrations.retention_settings`);
    await q.query(`DROP TABLE integrations.account_deletions`);
  }
}
