// pg-boss for the benchmarks that compare against it: installed the first time into the ignored
// scripts/bench/.scratch/pgboss (npm registry, pinned major), and an echo worker pool as the anchor.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { connectNats } from '@bns/service-kit';
import { meter, numbers, sleep, waitFor } from './jobs-lib.mjs';

export const PGBOSS_MAJOR = 12;
const SCRATCH = join(dirname(fileURLToPath(import.meta.url)), '.scratch', 'pgboss');

/** pg-boss from the scratch folder, installed there (pinned major) when missing. */
export async function loadPgBoss() {
  const manifest = join(SCRATCH, 'node_modules', 'pg-boss', 'package.json');
  const installed = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined;
  if (installed?.split('.')[0] !== String(PGBOSS_MAJOR)) {
    mkdirSync(SCRATCH, { recursive: true });
    if (!existsSync(join(SCRATCH, 'package.json'))) {
      writeFileSync(
        join(SCRATCH, 'package.json'),
        `${JSON.stringify({ name: 'bench-pgboss-scratch', private: true, description: 'pg-boss for scripts/bench only' }, null, 2)}\n`,
      );
    }
    console.log(`installing pg-boss@${PGBOSS_MAJOR} into ${SCRATCH}`);
    const npm = spawnSync(
      'npm',
      ['install', '--prefix', SCRATCH, '--no-audit', '--no-fund', `pg-boss@${PGBOSS_MAJOR}`],
      { stdio: 'inherit' },
    );
    if (npm.status !== 0) throw new Error(`npm install pg-boss@${PGBOSS_MAJOR} failed`);
  }
  const entry = createRequire(join(SCRATCH, 'package.json')).resolve('pg-boss');
  const { PgBoss } = await import(pathToFileURL(entry).href);
  return { PgBoss, version: JSON.parse(readFileSync(manifest, 'utf8')).version };
}

/**
 * A pg-boss pool of `workers` workers fetching batches of `batch` in a database of its own on the
 * bench's Postgres server; each job's handler makes one NATS request to a responder in this process
 * that replies at once. Timed and metered from the first insert (enqueue included) to the last job
 * completed in the database: what a plain job queue costs per job on the same machine. Returns
 * { rate, ...meter figures }.
 */
export async function pgBossEcho(bench, PgBoss, { total, workers, batch, database, extraProcesses = [], top = 10 }) {
  const url = new URL(bench.sys.postgres.url);
  url.pathname = `/${database}`;
  const admin = new pg.Client({ connectionString: bench.sys.postgres.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const subject = `bench.${database}.echo`;
  const responder = await connectNats(bench.sys.nats.url, `${database}-responder`);
  const reply = JSON.stringify({ ok: true });
  responder.subscribe(subject, { callback: (err, msg) => err || msg.respond(reply) });
  const requester = await connectNats(bench.sys.nats.url, `${database}-worker`);
  const boss = new PgBoss({ connectionString: url.href, schedule: false });
  boss.on('error', (err) => console.error(`pg-boss: ${err.message}`));
  await boss.start();
  const check = new pg.Client({ connectionString: url.href });
  await check.connect();
  const metered = await meter(bench, { database, processes: extraProcesses, top });
  let handled = 0;
  const handler = async (jobs) => {
    await Promise.all(jobs.map((job) => requester.request(subject, JSON.stringify(job.data), { timeout: 30_000 })));
    handled += jobs.length;
  };
  const options = {
    batchSize: batch,
    localConcurrency: workers,
    burstWhenBatchFull: true,
    pollingIntervalSeconds: 0.5,
  };
  const enqueue = async (queue, n) => {
    for (let i = 0; i < n; i += 1000)
      await boss.insert(
        queue,
        numbers(Math.min(1000, n - i), 90_000_000 + i).map((to) => ({ data: { to, text: 'campaign' } })),
      );
  };
  const completed = async (queue) =>
    Number(
      (await check.query("SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'", [queue]))
        .rows[0].n,
    );
  try {
    await boss.createQueue('warm-up');
    await boss.createQueue('bench');
    await enqueue('warm-up', 500);
    const warm = await boss.work('warm-up', options, handler);
    await waitFor(async () => (await completed('warm-up')) >= 500, 60_000, 50, 'pg-boss warm-up');
    await boss.offWork('warm-up', { id: warm, wait: true });
    handled = 0;
    await sleep(1000);
    await metered.start();
    const t0 = performance.now();
    // Enqueue and work at once, as a campaign's jobs arrive while the workers run.
    await boss.work('bench', options, handler);
    await enqueue('bench', total);
    await waitFor(() => handled >= total, 900_000, 10, 'pg-boss jobs handled');
    await waitFor(async () => (await completed('bench')) >= total, 60_000, 10, 'pg-boss jobs completed');
    const seconds = (performance.now() - t0) / 1000;
    const figures = await metered.report(`pg-boss → echo, ${workers} × batch ${batch}, enqueue included`, total);
    return { rate: total / seconds, seconds, ...figures };
  } finally {
    await metered.stop();
    await boss.stop({ graceful: true, timeout: 10_000 });
    await check.end();
    await requester.drain();
    await responder.drain();
  }
}
