import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log: append-only, one row per action of a user, deduplicated by the event id (a redelivered
 * or republished event is one entry). No call updates a row, and the trigger refuses an UPDATE from
 * anywhere (a later change of code included); rows leave only by the yearly purge or the account's deletion.
 */
export class AuditLog1797400000000 implements MigrationInterface {
  name = 'AuditLog1797400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE integrations.audit_log (
        id bigserial PRIMARY KEY,
        event_id text NOT NULL UNIQUE,
        user_id text NOT NULL,
        kind text NOT NULL,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        address text,
        details jsonb NOT NULL DEFAULT '{}'::jsonb
      )`);
    await q.query(`CREATE INDEX audit_log_user_at_idx ON integrations.audit_log (user_id, at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX audit_log_user_kind_at_idx ON integrations.audit_log (user_id, kind, at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX audit_log_at_idx ON integrations.audit_log (at)`);
    await q.query(`
      CREATE FUNCTION integrations.audit_log_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the audit log is append-only: entries are never changed';
      END $$`);
    await q.query(`
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON integrations.audit_log
        FOR EACH ROW EXECUTE FUNCTION integrations.audit_log_refuse_update()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE integrations.audit_log`);
    await q.query(`DROP FUNCTION integrations.audit_log_refuse_update()`);
  }
}
