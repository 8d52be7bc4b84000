#!/usr/bin/env node
// Deleting an account with many per-recipient rows, as the jobs service's deletion does it (batches of
// ACCOUNT_LIMITS.deleteBatchRows, each its own statement), on a private Postgres migrated like jobs':
// time to delete everything, and the longest single batch (the longest any lock is held).
//   node scripts/bench/account-deletion.mjs [recipients=1000000]
import { randomUUID } from 'node:crypto';
import { ACCOUNT_LIMITS } from '@bns/contracts';
import { batchDeleteSql, openDatabase, rows, Transactions } from '@bns/service-kit';
import { startPostgres } from '@bns/testing';
import { JOBS_ENTITIES, JOBS_MIGRATIONS, JOBS_SCHEMA } from '../../services/jobs/dist/database/data-source.js';
import { JobsAccountData } from '../../services/jobs/dist/account/jobs-account-data.js';

const N = Number(process.argv[2] ?? 1_000_000);
const JOBS = 4;
const pg = await startPostgres();
const db = await openDatabase({
  url: pg.url,
  schema: JOBS_SCHEMA,
  entities: JOBS_ENTITIES,
  migrations: JOBS_MIGRATIONS,
});
try {
  const tx = new Transactions(db);
  const userId = 'user_bench_deleted';
  const other = 'user_bench_kept';
  const jobIds = [];
  const t0 = Date.now();
  for (const [who, count] of [
    [userId, N],
    [other, 10_000],
  ]) {
    for (let j = 0; j < JOBS; j++) {
      // Version 8, as minted job ids are (the table checks it).
      const id = randomUUID().replace(/^(.{14})./, '$18');
      if (who === userId) jobIds.push(id);
      const per = Math.ceil(count / JOBS);
      await db.query(
        `INSERT INTO jobs (id, user_id, status, message, total, delay_ms, estimated_minutes)
         VALUES ($1, $2, 'completed', 'Hello {{name}}', $3, 0, 0)`,
        [id, who, per],
      );
      await db.query(
        `INSERT INTO job_recipients (job_id, seq, phone, text, state, done_at, variables)
         SELECT $1, s, (60000000 + s)::text, 'Hello #' || s, 'sent', now(), jsonb_build_object('name', '#' || s)
           FROM generate_series(1, $2) s`,
        [id, per],
      );
    }
  }
  await db.query('ANALYZE');
  console.log(
    `seeded ${N} recipients (+ variables) of one user in ${JOBS} jobs, 10000 of another: ${Date.now() - t0} ms`,
  );

  // The longest batch, measured on a full table: the one statement that holds a batch's row locks.
  let longest = 0;
  for (let i = 0; i < 5; i++) {
    const s = performance.now();
    await rows(tx.manager, batchDeleteSql('"job_recipients"', 'job_id = $1::uuid', '$2'), [
      jobIds[0],
      ACCOUNT_LIMITS.deleteBatchRows,
    ]);
    longest = Math.max(longest, performance.now() - s);
  }
  const started = Date.now();
  const deleted = await new JobsAccountData(tx, {
    cancel: () => Promise.reject(new Error('no campaign runs here')),
  }).deleteUser(userId);
  const tookMs = Date.now() - started;
  const left = (
    await db.query(`SELECT count(*)::int AS n FROM job_recipients WHERE job_id = ANY($1::uuid[])`, [jobIds])
  )[0].n;
  const kept = (await db.query(`SELECT count(*)::int AS n FROM job_recipients`))[0].n;
  console.log(
    `deleted ${deleted} rows in ${(tookMs / 1000).toFixed(1)} s (${Math.round(deleted / (tookMs / 1000))} rows/s), ` +
      `longest batch of ${ACCOUNT_LIMITS.deleteBatchRows}: ${longest.toFixed(0)} ms; left: ${left}; the other user's recipients kept: ${kept}`,
  );
} finally {
  await db.destroy();
  await pg.stop();
}
