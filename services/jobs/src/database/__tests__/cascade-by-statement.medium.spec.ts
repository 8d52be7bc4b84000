import { describe, expect, it } from '@jest/globals';
import { mintJobId } from '@bns/service-kit';
import { migratedDatabase } from './migrated-database.js';

describe('recipients without per-row foreign keys (real Postgres, every jobs migration)', () => {
  const db = migratedDatabase();

  /** `n` job ids as the service mints them (the table's constraint checks it). */
  const mint = async (n: number) => {
    const [{ key }] = await db().query(`SELECT key FROM jobs.job_id_scheme`);
    return Array.from({ length: n }, () => mintJobId(key as Buffer, 'u1'));
  };
  const seed = async (ids: string[]) => {
    for (const id of ids) {
      await db().query(
        `INSERT INTO jobs.jobs (id, user_id, status, message, total, delay_ms, estimated_minutes) VALUES ($1, 'u1', 'queued', 'Hi', 2, 0, 0)`,
        [id],
      );
      await db().query(
        `INSERT INTO jobs.job_recipients (job_id, seq, phone, variables) VALUES ($1, 1, '91000001', '{"name":"A"}'), ($1, 2, '91000002', '{"name":"B"}')`,
        [id],
      );
      await db().query(
        `INSERT INTO jobs.job_logs (job_id, type, message) VALUES ($1, 'info', 'Job started'), ($1, 'success', 'Message sent')`,
        [id],
      );
    }
  };
  const left = async (table: string, ids: string[]) =>
    Number((await db().query(`SELECT count(*) AS n FROM jobs.${table} WHERE job_id = ANY($1::uuid[])`, [ids]))[0].n);

  it("inserts a start's recipients and a job's log lines with no lookup of the job per row", async () => {
    const ids = await mint(1);
    await seed(ids);
    const checks = await db().query(
      `SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('jobs.job_recipients'::regclass, 'jobs.job_logs'::regclass)
          AND confrelid = 'jobs.jobs'::regclass`,
    );
    expect(Number(checks[0].n)).toBe(0);
  });

  it("still deletes a job's recipients, their variables and its log lines with the job, and only that job's", async () => {
    const [a, b, c] = await mint(3);
    const gone = [a, b];
    const kept = [c];
    await seed([...gone, ...kept]);
    await db().query(`DELETE FROM jobs.jobs WHERE id = ANY($1::uuid[])`, [gone]);
    expect(await left('job_recipients', gone)).toBe(0);
    expect(await left('job_recipients', kept)).toBe(2);
    expect(await left('job_logs', gone)).toBe(0);
    expect(await left('job_logs', kept)).toBe(2);
    // The variables live on the recipients' rows: the kept job's are all still there.
    const vars = await db().query(
      `SELECT variables->>'name' AS name FROM jobs.job_recipients WHERE job_id = $1 ORDER BY seq`,
      kept,
    );
    expect(vars.map((v: { name: string }) => v.name)).toEqual(['A', 'B']);
  });
});
