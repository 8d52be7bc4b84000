import { describe, expect, it } from '@jest/globals';
import { JobIdScheme1796500000000 } from '../migrations/1796500000000-job-id-scheme.js';
import { migratedDatabase } from './migrated-database.js';

/** Receipts move onto the recipient's row (a receipt is a HOT update): down to their own table and up again, no time lost. */
describe('migration ReceiptsOnRecipients1796400000000', () => {
  const db = migratedDatabase(JobIdScheme1796500000000);

  const times = (jobId: string) =>
    db().query(
      `SELECT seq, delivered_at AS d, read_at AS r, replied_at AS p FROM jobs.job_recipients WHERE job_id = $1 ORDER BY seq`,
      [jobId],
    );
  const tableExists = async () =>
    (await db().query(`SELECT to_regclass('jobs.recipient_receipts') IS NOT NULL AS e`))[0].e as boolean;

  it('down: the times go back to recipient_receipts (a row only for recipients with one); up: onto the recipients again, and the table is gone', async () => {
    // A version 8 id, as jobs are made since JobIdScheme1796500000000 (its constraint holds for new rows).
    const jobId = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0b';
    const d = new Date('2026-11-20T10:00:00Z');
    const r = new Date('2026-11-20T10:01:00Z');
    const p = new Date('2026-11-20T10:02:00Z');
    await db().query(
      `INSERT INTO jobs.jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, 'user_mig', 'hi', 3, 0, 0, 'completed')`,
      [jobId],
    );
    await db().query(
      `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, delivered_at, read_at, replied_at)
       VALUES ($1, 1, '91000001', 'sent', $2, $3, $4), ($1, 2, '91000002', 'sent', $2, NULL, NULL), ($1, 3, '91000003', 'failed', NULL, NULL, NULL)`,
      [jobId, d, r, p],
    );
    expect(await tableExists()).toBe(false);

    // JobIdScheme1796500000000 first, then it.
    await db().undoLastMigration();
    await db().undoLastMigration();
    expect(
      await db().query(
        `SELECT seq, delivered_at AS d, read_at AS r, replied_at AS p FROM jobs.recipient_receipts WHERE job_id = $1 ORDER BY seq`,
        [jobId],
      ),
    ).toEqual([
      { seq: 1, d, r, p },
      { seq: 2, d, r: null, p: null },
    ]);
    expect(
      await db().query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = 'jobs' AND table_name = 'job_recipients' AND column_name = 'delivered_at'`,
      ),
    ).toEqual([]);

    await db().runMigrations();
    expect(await tableExists()).toBe(false);
    expect(await times(jobId)).toEqual([
      { seq: 1, d, r, p },
      { seq: 2, d, r: null, p: null },
      { seq: 3, d: null, r: null, p: null },
    ]);
  });
});
