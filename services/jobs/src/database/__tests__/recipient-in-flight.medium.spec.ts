import { describe, expect, it } from '@jest/globals';
import { JobIdScheme1796500000000 } from '../migrations/1796500000000-job-id-scheme.js';
import { migratedDatabase } from './migrated-database.js';

/** The in-flight flag's migration (a take is a HOT update) goes down to the `sending` state and up again without losing a send in flight. */
describe('migration RecipientInFlight1796200000000', () => {
  const db = migratedDatabase(JobIdScheme1796500000000);

  const recipients = (jobId: string) =>
    db().query(`SELECT seq, state FROM jobs.job_recipients WHERE job_id = $1 ORDER BY seq`, [jobId]);
  const options = async () =>
    (await db().query(`SELECT reloptions FROM pg_class WHERE oid = 'jobs.job_recipients'::regclass`))[0].reloptions as
      string[] | null;

  it('down: a recipient in flight is `sending` again and the flag is gone; up: the flag is back, room kept on each page', async () => {
    // A version 8 id, as jobs are made since JobIdScheme1796500000000 (its constraint holds for new rows).
    const jobId = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0b';
    await db().query(
      `INSERT INTO jobs.jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, 'user_mig', 'hi', 3, 0, 0, 'running')`,
      [jobId],
    );
    await db().query(
      `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, in_flight) VALUES ($1, 1, '91000001', 'sent', false), ($1, 2, '91000002', 'pending', true), ($1, 3, '91000003', 'pending', false)`,
      [jobId],
    );
    expect(await options()).toEqual(['fillfactor=85']);

    // The migrations after it first, then it.
    await db().undoLastMigration();
    await db().undoLastMigration();
    await db().undoLastMigration();
    expect(await recipients(jobId)).toEqual([
      { seq: 1, state: 'sent' },
      { seq: 2, state: 'sending' },
      { seq: 3, state: 'pending' },
    ]);
    expect(
      await db().query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = 'jobs' AND table_name = 'job_recipients' AND column_name = 'in_flight'`,
      ),
    ).toEqual([]);
    expect(await options()).toBeNull();

    await db().runMigrations();
    // Rows the earlier version left `sending` stay so: the statements count them as in flight.
    expect(
      await db().query(`SELECT seq, state, in_flight FROM jobs.job_recipients WHERE job_id = $1 ORDER BY seq`, [jobId]),
    ).toEqual([
      { seq: 1, state: 'sent', in_flight: false },
      { seq: 2, state: 'sending', in_flight: false },
      { seq: 3, state: 'pending', in_flight: false },
    ]);
    expect(await options()).toEqual(['fillfactor=85']);
  });
});
