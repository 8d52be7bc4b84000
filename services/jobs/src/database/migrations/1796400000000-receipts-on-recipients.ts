import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Receipts (delivered, read, replied) move onto the recipient's own row, so a receipt costs no index entry. In their own table
 * every sent message cost an insert with a primary-key entry, a foreign-key check that locked the
 * recipient's row (a WAL record of its own), and a second row version with a second index entry when
 * the read came after the delivered. On `job_recipients` a receipt is an update of columns no index
 * holds: HOT, on a page that keeps room for it (fillfactor 85), with no index entry at all.
 */
export class ReceiptsOnRecipients1796400000000 implements MigrationInterface {
  name = 'ReceiptsOnRecipients1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE jobs.job_recipients
        ADD COLUMN delivered_at timestamptz,
        ADD COLUMN read_at timestamptz,
        ADD COLUMN replied_at timestamptz`);
    await q.query(`
      UPDATE jobs.job_recipients r
         SET delivered_at = k.delivered_at, read_at = k.read_at, replied_at = k.replied_at
        FROM jobs.recipient_receipts k
       WHERE k.job_id = r.job_id AND k.seq = r.seq`);
    await q.query(`DROP TABLE jobs.recipient_receipts`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.recipient_receipts (
        job_id uuid NOT NULL,
        seq integer NOT NULL,
        delivered_at timestamptz,
        read_at timestamptz,
        replied_at timestamptz,
        PRIMARY KEY (job_id, seq),
        FOREIGN KEY (job_id, seq) REFERENCES jobs.job_recipients (job_id, seq) ON DELETE CASCADE
      )`);
    await q.query(`
      INSERT INTO jobs.recipient_receipts (job_id, seq, delivered_at, read_at, replied_at)
      SELECT job_id, seq, delivered_at, read_at, replied_at FROM jobs.job_recipients
       WHERE delivered_at IS NOT NULL OR read_at IS NOT NULL OR replied_at IS NOT NULL`);
    await q.query(`
      ALTER TABLE jobs.job_recipients
        DROP COLUMN delivered_at,
        DROP COLUMN read_at,
        DROP COLUMN replied_at`);
  }
}
