import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A send the engine may have handed to WhatsApp without confirming it (no result, or a timeout after
 * the hand-over) is recorded as `unknown`: it keeps its claim forever, so it is never sent twice.
 */
export class SendStatusUnknown1795411781000 implements MigrationInterface {
  name = 'SendStatusUnknown1795411781000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sends DROP CONSTRAINT sends_status_check`);
    await q.query(
      `ALTER TABLE sessions.sends ADD CONSTRAINT sends_status_check CHECK (status IN ('sending', 'sent', 'failed', 'unknown'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE sessions.sends SET status = 'sent' WHERE status = 'unknown'`);
    await q.query(`ALTER TABLE sessions.sends DROP CONSTRAINT sends_status_check`);
    await q.query(
      `ALTER TABLE sessions.sends ADD CONSTRAINT sends_status_check CHECK (status IN ('sending', 'sent', 'failed'))`,
    );
  }
}
