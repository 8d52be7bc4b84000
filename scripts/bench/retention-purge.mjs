#!/usr/bin/env node
// The retention purge of campaign details with many per-recipient rows, as the jobs service runs it
// (RetentionRepository: batches of ACCOUNT_LIMITS.deleteBatchRows, each its own statement), on a private
// Postgres migrated like jobs': time to purge, and the longest single statement (the longest any lock
// is held). The recipients and variables of one user's finished campaigns are past a 30-day setting;
// another user's recent campaign and every job's counts must stay.
//   node scripts/bench/retention-purge.mjs [recipients=1000000]
import { randomUUID } from 'node:crypto';
import { ACCOUNT_LIMITS } from '@bns/contracts';
import { openDatabase, Transactions } from '@bns/service-kit';
import { startPostgres } from '@bns/testing';
import { JOBS_ENTITIES, JOBS_MIGRATIONS, JOBS_SCHEMA } from '../../services/jobs/dist/database/data-source.js';
import { RetentionRepository } from '../../services/jobs/dist/retention/retention.repository.js';

const N = Number(process.argv[2] ?? 1_000_000);
const JOBS = 4;
const DAY = 86_400_000;
const pg = await startPostgres();
const db = await openDatabase({
  url: pg.url,
  schema: JOBS_SCHEMA,
  entities: JOBS_ENTITIES,
  migrations: JOBS_MIGRATIONS,
});
try {
  const repo = new RetentionRepository(new Transactions(db));
  const now = new Date();
  const t0 = Date.now();
  const seed = async (userId, count, finishedDaysAgo) => {
    const ids = [];
    for (let j = 0; j < JOBS; j++) {
      const id = randomUUID().replace(/^(.{14})./, '$18');
      ids.push(id);
      const per = Math.ceil(count / JOBS);
      await db.query(
        `INSERT INTO jobs (id, user_id, status, message, total, sent, delay_ms, estimated_minutes, finished_at)
         VALUES ($1, $2, 'completed', 'Hello {{name}}', $3, $3, 0, 0, $4)`,
        [id, userId, per, new Date(now.getTime() - finishedDaysAgo * DAY)],
      );
      await db.query(
        `INSERT INTO job_recipients (job_id, seq, phone, text, state, done_at, variables)
         SELECT $1, s, (60000000 + s)::text, 'Hello #' || s, 'sent', now(), jsonb_build_object('name', '#' || s)
           FROM generate_series(1, $2) s`,
        [id, per],
      );
    }
    return ids;
  };
  const purged = await seed('user_bench_month', N, 100);
  const kept = await seed('user_bench_default', 10_000, 100); // within the default 365 days
  await repo.saveSettings([{ userId: 'user_bench_month', days: 30 }]);
  await db.query('ANALYZE');
  console.log(
    `seeded ${N} recipients (+ variables) past a 30-day setting in ${JOBS} jobs, 10000 of a user on the default: ${Date.now() - t0} ms`,
  );

  // The purge, as RetentionPurge.run does it after reading the settings, each statement timed.
  let longest = 0;
  let removed = 0;
  const timed = async (fn) => {
    const s = performance.now();
    const out = await fn();
    longest = Math.max(longest, performance.now() - s);
    return out;
  };
  const started = Date.now();
  for (;;) {
    const due = await timed(() => repo.due(now, 100));
    for (const job of due) {
      for (const table of repo.detailTables)
        for (;;) {
          const n = await timed(() => repo.deleteDetailBatch(table, job.id));
          removed += n;
          if (n === 0) break;
        }
      await timed(() => repo.markPurged(job.id, job.days));
    }
    if (due.length < 100) break;
  }
  const tookMs = Date.now() - started;
  const left = (
    await db.query(`SELECT count(*)::int AS n FROM job_recipients WHERE job_id = ANY($1::uuid[])`, [purged])
  )[0].n;
  const stayed = (
    await db.query(`SELECT count(*)::int AS n FROM job_recipients WHERE job_id = ANY($1::uuid[])`, [kept])
  )[0].n;
  const counts = (await db.query(`SELECT sum(sent)::int AS n FROM jobs WHERE id = ANY($1::uuid[])`, [purged]))[0].n;
  console.log(
    `purged ${removed} rows in ${(tookMs / 1000).toFixed(1)} s (${Math.round(removed / (tookMs / 1000))} rows/s), ` +
      `longest statement (batch of ${ACCOUNT_LIMITS.deleteBatchRows}): ${longest.toFixed(0)} ms; left: ${left}; ` +
      `the other user's (default 365 days) recipients kept: ${stayed}; sent counts kept: ${counts}`,
  );
} finally {
  await db.destroy();
  await pg.stop();
}
