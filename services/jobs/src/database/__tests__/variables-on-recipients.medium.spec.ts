import { describe, expect, it } from '@jest/globals';
import { VariablesOnRecipients1798500000000 } from '../migrations/1798500000000-variables-on-recipients.js';
import { migratedDatabase } from './migrated-database.js';

/** Variables move onto the recipient's row: down to their own table and up again, none lost, the job marked personalised. */
describe('migration VariablesOnRecipients1798500000000', () => {
  const db = migratedDatabase(VariablesOnRecipients1798500000000);

  const tableExists = async () =>
    (await db().query(`SELECT to_regclass('jobs.recipient_variables') IS NOT NULL AS e`))[0].e as boolean;
  const seedJob = async (jobId: string, variables: (string | null)[]) => {
    await db().query(
      `INSERT INTO jobs.jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, 'user_mig', 'hi', $2, 0, 0, 'completed')`,
      [jobId, variables.length],
    );
    await db().query(
      `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, variables)
       SELECT $1, v.seq, (91000000 + v.seq)::text, 'sent', v.value::jsonb FROM unnest($2::text[]) WITH ORDINALITY AS v(value, seq)`,
      [jobId, variables],
    );
  };

  it('down: the variables go back to recipient_variables (a row only for recipients with some); up: onto the recipients again, and the table is gone', async () => {
    const personal = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0b';
    const plain = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0c';
    await seedJob(personal, ['{"name":"Ann"}', null, '{"name":"Cy","city":"Tai Po"}']);
    await seedJob(plain, [null, null]);
    await db().query(`UPDATE jobs.jobs SET personalised = true WHERE id = $1`, [personal]);
    expect(await tableExists()).toBe(false);

    await db().undoLastMigration();
    expect(
      await db().query(`SELECT job_id, seq, variables FROM jobs.recipient_variables ORDER BY job_id, seq`),
    ).toEqual([
      { job_id: personal, seq: 1, variables: { name: 'Ann' } },
      { job_id: personal, seq: 3, variables: { name: 'Cy', city: 'Tai Po' } },
    ]);
    expect(
      await db().query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = 'jobs' AND table_name = 'job_recipients' AND column_name = 'variables'`,
      ),
    ).toEqual([]);

    await db().runMigrations();
    expect(await tableExists()).toBe(false);
    expect(await db().query(`SELECT job_id, seq, variables FROM jobs.job_recipients ORDER BY job_id, seq`)).toEqual([
      { job_id: personal, seq: 1, variables: { name: 'Ann' } },
      { job_id: personal, seq: 2, variables: null },
      { job_id: personal, seq: 3, variables: { name: 'Cy', city: 'Tai Po' } },
      { job_id: plain, seq: 1, variables: null },
      { job_id: plain, seq: 2, variables: null },
    ]);
    expect(await db().query(`SELECT id, personalised FROM jobs.jobs ORDER BY id`)).toEqual([
      { id: personal, personalised: true },
      { id: plain, personalised: false },
    ]);

    // A deleted job still takes its recipients, and their variables, with it.
    await db().query(`DELETE FROM jobs.jobs WHERE id = $1`, [personal]);
    expect(
      await db().query(`SELECT count(*)::int AS n FROM jobs.job_recipients WHERE job_id = $1`, [personal]),
    ).toEqual([{ n: 0 }]);
  });
});
