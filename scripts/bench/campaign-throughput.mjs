#!/usr/bin/env node
// The cost of a campaign end to end, as a user lives it: N accounts each start a job of M recipients at
// once (POST /start-bulk-messages, accept included) at SEND_DELAY_MS=0, timed until every message is
// sent and its delivered and read receipts are folded into the report (jobs.job_receipts). Per message:
// CPU of each process and of the machine (all of them), Postgres commits, statements and row writes by
// table (jobs-lib's meter). Then, labelled as such, the send-only figure: the same jobs created
// beforehand with a startAt, measured from that moment to the last completion (receipts not waited for).
// The anchor in the same run: a pg-boss pool of 1 and of 4 workers, batch 20, whose handler makes one NATS
// request to an echo responder, enqueue included (pgboss-lib.mjs).
//   flock /tmp/bench.lock node scripts/bench/campaign-throughput.mjs [accounts=200] [perAccount=50]
// BENCH_SCHEDULE_LEAD_MS (15000): how far ahead the send-only jobs are scheduled. The simulated phone
// acknowledges delivered after SIM_DELIVERED_DELAY_MS (200 here) and read after SIM_READ_DELAY_MS (400).
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { useNode24 } from '../runtime.mjs';
import {
  countResults,
  linkedUsers,
  meter,
  numbers,
  sleep,
  startBench,
  startJob,
  waitFor,
  warmUp,
} from './jobs-lib.mjs';
import { loadPgBoss, pgBossEcho } from './pgboss-lib.mjs';

await useNode24();

const ACCOUNTS = Number(process.argv[2] ?? 200);
const PER_ACCOUNT = Number(process.argv[3] ?? 50);
const TOTAL = ACCOUNTS * PER_ACCOUNT;
const LEAD_MS = Number(process.env.BENCH_SCHEDULE_LEAD_MS ?? 15_000);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const machineMs = (f) => f.postgresMs + Object.values(f.cpuMs).reduce((a, b) => a + b, 0);
const perProcess = (f) =>
  [['postgres', f.postgresMs], ...Object.entries(f.cpuMs)]
    .sort((a, b) => b[1] - a[1])
    .map(([n, ms]) => `${n} ${ms.toFixed(2)}`)
    .join(', ');
const topTables = (f, n = 6) =>
  Object.entries(f.rowWritesByTable ?? {})
    .slice(0, n)
    .map(([t, w]) => `${t} ${w.toFixed(2)}`)
    .join(', ');

const { PgBoss, version } = await loadPgBoss();
console.log(`${cpus().length} cores, load average ${load()}; Node ${process.versions.node}; pg-boss ${version}`);
const bench = await startBench(
  { SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' },
  { env: { SIM_DELIVERED_DELAY_MS: '200', SIM_READ_DELAY_MS: '400' } },
);
const db = new pg.Client({ connectionString: bench.sys.postgres.url });
await db.connect();
const folded = async (jobIds) =>
  (
    await db.query(
      'SELECT coalesce(sum(delivered), 0)::int AS d, coalesce(sum(read), 0)::int AS r FROM jobs.job_receipts WHERE job_id = ANY($1::uuid[])',
      [jobIds],
    )
  ).rows[0];
const results = countResults(bench.nc);
const extra = [
  { name: 'nats-server', pid: bench.sys.nats.process.pid },
  { name: 'bench', pid: process.pid },
];
const lines = [];
try {
  const users = await linkedUsers(bench, ACCOUNTS, 'campaign');
  await warmUp(users[0], results);
  await sleep(2000);

  // 1. Accept + send + receipts folded.
  const metered = await meter(bench, { processes: extra, top: 25 });
  const before = results.total;
  await metered.start();
  const load0 = load();
  const t0 = performance.now();
  const started = await Promise.all(
    users.map((u, i) => startJob(u, { message: `campaign ${i}`, phoneNumbers: numbers(PER_ACCOUNT, 70_000_000) })),
  );
  const acceptedS = (performance.now() - t0) / 1000;
  const jobIds = started.map((s) => s.jobId);
  await waitFor(() => results.total - before >= TOTAL, 900_000, 20, 'every message sent');
  const sentS = (performance.now() - t0) / 1000;
  await waitFor(
    async () => {
      const f = await folded(jobIds);
      return f.d >= TOTAL && f.r >= TOTAL;
    },
    120_000,
    100,
    'every receipt folded',
  );
  const foldedS = (performance.now() - t0) / 1000;
  const e2e = await metered.report(`campaign (accept + send + receipts), ${ACCOUNTS} × ${PER_ACCOUNT}`, TOTAL);
  await metered.stop();
  const loadE2e = `${load0} → ${load()}`;

  // 2. Send only: created beforehand with a startAt.
  await sleep(2000);
  const metered2 = await meter(bench, { processes: extra, top: 10 });
  const before2 = results.total;
  const startAt = Date.now() + LEAD_MS;
  await Promise.all(
    users.map((u, i) =>
      startJob(u, {
        message: `scheduled ${i}`,
        phoneNumbers: numbers(PER_ACCOUNT, 75_000_000),
        startAt: new Date(startAt).toISOString(),
      }),
    ),
  );
  if (Date.now() > startAt - 500)
    throw new Error('creating the scheduled jobs took too long: raise BENCH_SCHEDULE_LEAD_MS');
  await sleep(startAt - Date.now() - 100);
  await metered2.start();
  const load1 = load();
  await sleep(Math.max(0, startAt - Date.now()));
  const t1 = performance.now();
  await waitFor(() => results.total - before2 >= TOTAL, 900_000, 20, 'every scheduled message sent');
  const sendOnlyS = (performance.now() - t1) / 1000;
  const sendOnly = await metered2.report(`send only, ${ACCOUNTS} × ${PER_ACCOUNT}`, TOTAL);
  await metered2.stop();
  const loadSend = `${load1} → ${load()}`;

  // 3. The anchor: pg-boss pools doing one NATS round trip to an echo responder per job, enqueue included.
  const anchors = [];
  for (const workers of [1, 4]) {
    await sleep(1000);
    const l = load();
    const r = await pgBossEcho(bench, PgBoss, {
      total: TOTAL,
      workers,
      batch: 20,
      database: `pgboss_echo_${workers}`,
      extraProcesses: extra,
    });
    anchors.push({ workers, load: `${l} → ${load()}`, ...r });
  }

  const rate = TOTAL / foldedS;
  lines.push(
    `\ncampaign-throughput ${ACCOUNTS} accounts × ${PER_ACCOUNT} recipients = ${TOTAL} messages, delay 0; ${cpus().length} cores`,
  );
  lines.push(
    `accept + send + receipts folded: ${rate.toFixed(0)} msg/s (all accepted ${acceptedS.toFixed(1)} s, all sent ${sentS.toFixed(1)} s, all receipts folded ${foldedS.toFixed(1)} s); ` +
      `machine CPU ${machineMs(e2e).toFixed(2)} ms/msg (${perProcess(e2e)}); ${e2e.commits.toFixed(2)} commits, ${e2e.statements.toFixed(1)} statements, ${e2e.rowWrites.toFixed(1)} row writes per message (${topTables(e2e)}); load ${loadE2e}`,
  );
  lines.push(
    `send only (jobs created beforehand, receipts not waited for): ${(TOTAL / sendOnlyS).toFixed(0)} msg/s over ${sendOnlyS.toFixed(1)} s; ` +
      `machine CPU ${machineMs(sendOnly).toFixed(2)} ms/msg; ${sendOnly.commits.toFixed(2)} commits, ${sendOnly.statements.toFixed(1)} statements, ${sendOnly.rowWrites.toFixed(1)} row writes per message; load ${loadSend}`,
  );
  for (const a of anchors)
    lines.push(
      `anchor pg-boss ${version} ${a.workers} worker${a.workers === 1 ? '' : 's'} × batch 20 → NATS echo, enqueue included: ${a.rate.toFixed(0)} jobs/s, machine CPU ${machineMs(a).toFixed(2)} ms/job, ${a.commits.toFixed(2)} commits/job; ` +
        `campaign / this = ${(rate / a.rate).toFixed(2)}×; load ${a.load}`,
    );
  console.log(lines.join('\n'));
} finally {
  results.stop();
  await db.end();
  await bench.stop();
}
