import { describe, expect, it } from '@jest/globals';
import { SentLinesFromRecipients1799000000000 } from '../migrations/1799000000000-sent-lines-from-recipients.js';
import { migratedDatabase } from './migrated-database.js';

/** "Message sent" lines read from the recipients: down stores them again, up removes the stored ones and nothing else. */
describe('migration SentLinesFromRecipients1799000000000', () => {
  const db = migratedDatabase(SentLinesFromRecipients1799000000000);

  const lines = (jobId: string) =>
    db().query(`SELECT type, message, at FROM jobs.job_logs WHERE job_id = $1 ORDER BY at, id`, [jobId]);

  it('down: each sent recipient has its line stored at its sent time; up: those lines go, the others stay', async () => {
    const jobId = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0c';
    await db().query(
      `INSERT INTO jobs.jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, 'user_mig', 'hi', 3, 0, 0, 'running')`,
      [jobId],
    );
    await db().query(
      `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, done_at) VALUES
         ($1, 1, '91000001', 'sent', '2026-12-06T01:00:00.0105Z'), ($1, 2, '91000002', 'failed', '2026-12-06T01:00:01Z'), ($1, 3, '91000003', 'pending', NULL)`,
      [jobId],
    );
    await db().query(
      `INSERT INTO jobs.job_logs (job_id, type, message, at) VALUES ($1, 'info', 'Job started: sending to 3 recipients', '2026-12-06T01:00:00Z'),
         ($1, 'error', 'Failed to send to 91000002: no', '2026-12-06T01:00:01Z')`,
      [jobId],
    );

    await db().undoLastMigration();
    expect(await lines(jobId)).toEqual([
      { type: 'info', message: 'Job started: sending to 3 recipients', at: new Date('2026-12-06T01:00:00Z') },
      { type: 'success', message: 'Message sent to 91000001', at: new Date('2026-12-06T01:00:00.010Z') },
      { type: 'error', message: 'Failed to send to 91000002: no', at: new Date('2026-12-06T01:00:01Z') },
    ]);

    await db().runMigrations();
    expect((await lines(jobId)).map((l: { message: string }) => l.message)).toEqual([
      'Job started: sending to 3 recipients',
      'Failed to send to 91000002: no',
    ]);
  });
});
