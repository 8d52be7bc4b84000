#!/usr/bin/env node
// Our send pipeline against a pg-boss batch worker, in one run on the same Postgres server and NATS.
//   A. ours: N accounts × M messages at SEND_DELAY_MS=0 through gateway → jobs → sessions (simulated
//      engine) → events, as jobs-throughput runs it; messages/s from the start calls to the last job's
//      completion reported on NATS (its progress event; the bench listens to no per-message event), and per message (jobs-lib's `meter`): Postgres commits and statements of the
//      system's database, Postgres CPU (the whole server), CPU of each service, nats-server and this
//      process. Twice: "accept + send" times and meters the start calls too (job creation: 200
//      HTTP starts, their recipients written); "send only" creates the same jobs with a `startAt`
//      BENCH_SCHEDULE_LEAD_MS ahead (default 15000) and times and meters from that moment, as B
//      times pg-boss's work on jobs enqueued beforehand. B's enqueue is timed too (not metered), for
//      an "accept + send" ratio against pg-boss's enqueue + work.
//   B. pg-boss → sessions: the same number of jobs, enqueued beforehand with `insert` (not timed), in
//      a database of its own on the same server; workers fetch batches and each job makes the very
//      request our jobs service makes per message, `sessions.send` (the same users' linked simulated
//      accounts, an idempotency key per message) to the running sessions service, which records and
//      sends it as for ours; then the batch is completed by pg-boss. Jobs/s from `work()` to the last
//      job completed in the database, and per job the same figures (commits and statements of
//      pg-boss's database and the system's). This is the same round trip as ours, so the ratio is
//      what our queue (pacing lanes, outcomes, progress, results) costs against pg-boss's.
//   C. pg-boss → echo: the same again, but each job's request goes to a responder in this process
//      that replies at once and does nothing: pg-boss's own ceiling (commits and statements of its
//      database only). PGBOSS_TARGETS=sessions or =echo runs only one of B and C.
// Then a table of all and the throughput ratios ours / pg-boss. The system's services stay up (idle)
// during B, as Postgres's figures are for the whole server; their idle Postgres CPU is printed.
// pg-boss is installed only for this benchmark, into scripts/bench/.scratch/pgboss (ignored by git),
// the first time it runs (npm registry). It needs Node ≥ 22.12: the script runs itself under Node 24.
// Build first (services/jobs, services/sessions, services/gateway).
//   flock /tmp/bench.lock node scripts/bench/pgboss-compare.mjs [accounts=200] [perAccount=50]
//   PGBOSS_BATCH=20 PGBOSS_WORKERS=1 (the default): the comparator our throughput goal is set against, one
//   pg-boss worker fetching batches of 20 (workers = pg-boss localConcurrency; =4 runs four such workers side
//   by side, a stronger pg-boss; a batch's round trips run concurrently, so up to WORKERS × BATCH
//   requests are in flight; PGBOSS_SERIAL=1 runs them one after another, so WORKERS are in flight)
//   BENCH_ROUNDS=N: N more rounds of "send only" against pg-boss → sessions after the first (pg-boss first
//   in every other round), each printed with its ratio, then the median, the spread and how many reached 1×
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { idempotencyKeyOf } from '@bns/contracts';
import { connectNats } from '@bns/service-kit';
import { useNode24 } from '../runtime.mjs';
import {
  countResults,
  linkedUsers,
  meter,
  numbers,
  sleep,
  startBench,
  startJob,
  startRetried,
  waitFor,
  warmUp,
} from './jobs-lib.mjs';
import { loadPgBoss } from './pgboss-lib.mjs';
import { postgresCpu } from './proc-lib.mjs';

await useNode24();

const ACCOUNTS = Number(process.argv[2] ?? 200);
const PER_ACCOUNT = Number(process.argv[3] ?? 50);
const TOTAL = ACCOUNTS * PER_ACCOUNT;
const BATCH = Number(process.env.PGBOSS_BATCH ?? 20);
const WORKERS = Number(process.env.PGBOSS_WORKERS ?? 1);
const SERIAL = process.env.PGBOSS_SERIAL === '1';
const WORKER_SETUP = `${WORKERS} worker${WORKERS === 1 ? '' : 's'} × batch ${BATCH}${SERIAL ? ', round trips one at a time' : ''}`;
const TARGETS = (process.env.PGBOSS_TARGETS ?? 'sessions,echo')
  .split(',')
  .map((t) => t.trim())
  .filter(Boolean);
if (TARGETS.length === 0 || TARGETS.some((t) => t !== 'sessions' && t !== 'echo'))
  throw new Error('PGBOSS_TARGETS: sessions, echo or both');
const SCHEDULE_LEAD_MS = Number(process.env.BENCH_SCHEDULE_LEAD_MS ?? 15_000);
/** Rounds of "send only" against pg-boss → sessions after the first, their order alternating (BENCH_ROUNDS). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 0);
if (!Number.isInteger(ROUNDS) || ROUNDS < 0)
  throw new Error('BENCH_ROUNDS: a whole number of extra rounds (0 by default)');
const PGBOSS_DB = 'pgboss_bench';
const SUBJECT = 'bench.pgboss.send';

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/**
 * Phase A: our pipeline, as jobs-throughput's "many accounts" part. `scheduled`: the jobs are created
 * first with a `startAt` SCHEDULE_LEAD_MS ahead, and the window (time and CPU) starts then: sending only.
 */
async function ours(bench, extraProcesses, { scheduled = false, users: known, phoneBase = 70_000_000 } = {}) {
  const results = countResults(bench.nc);
  const metered = await meter(bench, { processes: extraProcesses, top: 15 });
  const label = scheduled ? 'send only' : 'accept + send';
  try {
    const users = known ?? (await linkedUsers(bench, ACCOUNTS, 'pgboss-compare'));
    if (!known) await warmUp(users[0], results);
    await sleep(1000);

    const before = results.total;
    const startAt = Date.now() + SCHEDULE_LEAD_MS;
    const body = (i) => ({
      message: `account ${i}`,
      phoneNumbers: numbers(PER_ACCOUNT, phoneBase),
      ...(scheduled ? { startAt: new Date(startAt).toISOString() } : {}),
    });
    let t0;
    if (scheduled) {
      await Promise.all(users.map((u, i) => startJob(u, body(i))));
      const created = Date.now();
      if (created > startAt - 500)
        throw new Error(
          `creating the jobs took until ${created - startAt + SCHEDULE_LEAD_MS} ms after the first call: raise BENCH_SCHEDULE_LEAD_MS`,
        );
      if (results.total !== before) throw new Error('a scheduled job sent before its startAt');
      await sleep(startAt - Date.now() - 100);
      await metered.start();
      await sleep(Math.max(0, startAt - Date.now()));
      t0 = performance.now();
    } else {
      await metered.start();
      t0 = performance.now();
      await Promise.all(users.map((u, i) => startJob(u, body(i))));
    }
    await waitFor(() => results.total - before >= TOTAL, 900_000, 20, 'all jobs');
    const seconds = (performance.now() - t0) / 1000;
    const rate = TOTAL / seconds;
    const spread = (times) => {
      const s = times
        .slice(-ACCOUNTS)
        .map((t) => (t - t0) / 1000)
        .sort((a, b) => a - b);
      const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]?.toFixed(2);
      return `first ${at(0)}, 10% ${at(0.1)}, median ${at(0.5)}, 90% ${at(0.9)}, last ${at(1)}`;
    };
    console.log(`  jobs completed at (s from the start): ${spread(results.finished)}`);
    console.log(`  jobs' first report (running) at (s from the start): ${spread(results.firstHeard)}`);
    console.log(`  jobs' first outcome reported at (s from the start): ${spread(results.firsts)}`);
    console.log(
      `  messages/s by half second from the start: ${ratesByHalfSecond(results.timeline, t0, before).join(' ')}`,
    );
    // The last outbox rows and receipts settle, then the figures are read.
    await sleep(1500);
    const figures = await metered.report(`ours (${label}), ${ACCOUNTS} accounts × ${PER_ACCOUNT} messages`, TOTAL);
    console.log(
      scheduled
        ? `ours (send only): ${rate.toFixed(0)} messages/s over ${seconds.toFixed(1)} s (the jobs' startAt → the last one's completion reported on NATS; created beforehand)`
        : `ours (accept + send): ${rate.toFixed(0)} messages/s over ${seconds.toFixed(1)} s (start calls → the last job's completion reported on NATS; ${startRetried()} starts shed with 503/429 and tried again)`,
    );
    return { rate, ...figures, postmaster: metered.postmaster, users, label };
  } finally {
    await metered.stop();
    results.stop();
  }
}

/** The rate of outcomes in each half second after `t0`, from the observer's [time, total] samples. */
function ratesByHalfSecond(timeline, t0, before) {
  const totals = []; // the total at the end of each half second
  let total = before;
  for (const [t, after] of timeline) {
    if (t < t0) continue;
    const bucket = Math.floor((t - t0) / 500);
    while (totals.length < bucket) totals.push(total);
    total = after;
  }
  totals.push(total);
  return totals.map((t, i) => String((t - (i === 0 ? before : totals[i - 1])) * 2));
}

/** Postgres CPU ms per second over `ms` while nothing is sent (the idle system's background). */
async function idlePostgres(postmaster, ms = 3000) {
  const before = postgresCpu(postmaster);
  await sleep(ms);
  return ((postgresCpu(postmaster) - before) * 1000) / (ms / 1000);
}

/**
 * Phases B and C: a pg-boss batch worker doing one NATS round trip per job, to the sessions service
 * (`target` 'sessions': the request ours makes per message) or to a responder here that replies at once ('echo').
 */
async function pgBoss(bench, PgBoss, extraProcesses, target, users) {
  const url = new URL(bench.sys.postgres.url);
  url.pathname = `/${PGBOSS_DB}`;

  // Echo: the far side of the round trip replies at once.
  let responder;
  let requester;
  if (target === 'echo') {
    responder = await connectNats(bench.sys.nats.url, 'bench-pgboss-responder');
    const reply = JSON.stringify({ ok: true });
    responder.subscribe(SUBJECT, { callback: (err, msg) => err || msg.respond(reply) });
    requester = await connectNats(bench.sys.nats.url, 'bench-pgboss-worker');
  }
  // Sessions: one job id per account and phase, so every message has a key of its own (as ours).
  const jobIds = { 'warm-up': users.map(() => randomUUID()), bench: users.map(() => randomUUID()) };

  // No cron here; supervision/maintenance stay on (pg-boss's defaults), as in production.
  const boss = new PgBoss({ connectionString: url.href, schedule: false });
  boss.on('error', (err) => console.error(`pg-boss: ${err.message}`));
  await boss.start();
  const check = new pg.Client({ connectionString: url.href });
  await check.connect();
  // Sessions records each send in the system's database: both databases' commits and statements count.
  const metered = await meter(bench, {
    database: target === 'sessions' ? [PGBOSS_DB, undefined] : PGBOSS_DB,
    processes: extraProcesses,
    top: 15,
  });
  let handled = 0;
  let failedSends = 0;
  let lastError;
  const roundTrip =
    target === 'sessions'
      ? (job) =>
          bench.rpc.call('sessions.send', job.data).catch((err) => void (failedSends++, (lastError = err.message)))
      : (job) => requester.request(SUBJECT, JSON.stringify(job.data), { timeout: 30_000 });
  const handler = async (jobs) => {
    if (SERIAL) for (const job of jobs) await roundTrip(job);
    else await Promise.all(jobs.map(roundTrip));
    handled += jobs.length;
  };
  const workOptions = {
    batchSize: BATCH,
    localConcurrency: WORKERS,
    burstWhenBatchFull: true,
    pollingIntervalSeconds: 0.5,
  };
  const enqueue = async (queue, n, base) => {
    await boss.createQueue(queue);
    for (let i = 0; i < n; i += 1000) {
      const chunk = numbers(Math.min(1000, n - i), base + i);
      await boss.insert(
        queue,
        chunk.map((to, j) => {
          const account = (i + j) % ACCOUNTS;
          const text = `account ${account}`;
          const jobId = jobIds[queue][account];
          return {
            data:
              target === 'sessions'
                ? { userId: users[account].userId, to, text, jobId, idempotencyKey: idempotencyKeyOf(jobId, to) }
                : { to, text },
          };
        }),
      );
    }
  };
  const completed = async (queue) =>
    Number(
      (await check.query("SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'", [queue]))
        .rows[0].n,
    );
  try {
    // Numbers of their own per phase (and apart from ours), so no send is a repeat of another's.
    const base = target === 'sessions' ? 80_000_000 : 90_000_000;
    await enqueue('warm-up', 500, base + 5_000_000);
    const warm = await boss.work('warm-up', workOptions, handler);
    await waitFor(async () => (await completed('warm-up')) >= 500, 60_000, 50, 'pg-boss warm-up');
    await boss.offWork('warm-up', { id: warm, wait: true });
    const e0 = performance.now();
    await enqueue('bench', TOTAL, base);
    const enqueueSeconds = (performance.now() - e0) / 1000;
    handled = 0;
    await sleep(1000);

    await metered.start();
    const t0 = performance.now();
    await boss.work('bench', workOptions, handler);
    await waitFor(() => handled >= TOTAL, 900_000, 10, 'pg-boss jobs handled');
    await waitFor(async () => (await completed('bench')) >= TOTAL, 60_000, 10, 'pg-boss jobs completed');
    const seconds = (performance.now() - t0) / 1000;
    const rate = TOTAL / seconds;
    // The last sends' outbox rows settle, as for ours.
    if (target === 'sessions') await sleep(1500);
    const figures = await metered.report(`pg-boss → ${target}, ${WORKER_SETUP}`, TOTAL);
    console.log(
      `pg-boss → ${target}: ${rate.toFixed(0)} jobs/s over ${seconds.toFixed(1)} s (work() → last job completed in the database); its enqueue (insert of ${TOTAL} jobs, before): ${enqueueSeconds.toFixed(2)} s`,
    );
    if (failedSends > 0) console.log(`  ${failedSends} sends failed (last: ${lastError})`);
    return { rate, enqueueRate: TOTAL / (seconds + enqueueSeconds), ...figures };
  } finally {
    await metered.stop();
    await boss.stop({ graceful: true, timeout: 10_000 });
    // The next phase starts from empty queues.
    await check.query("DELETE FROM pgboss.job WHERE name IN ('warm-up', 'bench')").catch(() => undefined);
    await check.end();
    await requester?.drain();
    await responder?.drain();
  }
}

const { PgBoss, version } = await loadPgBoss();
console.log(`${cpus().length} cores, load average ${load()}; Node ${process.versions.node}; pg-boss ${version}`);
const bench = await startBench({ SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' });
try {
  const extraProcesses = [
    { name: 'nats-server', pid: bench.sys.nats.process.pid },
    { name: 'bench', pid: process.pid },
  ];
  const a = await ours(bench, extraProcesses);
  const sendOnly = await ours(bench, extraProcesses, { scheduled: true, users: a.users, phoneBase: 75_000_000 });
  const idle = await idlePostgres(a.postmaster);
  console.log(
    `idle system (no sends): Postgres ${idle.toFixed(1)} ms CPU per second (counted in both phases' Postgres CPU)`,
  );
  const admin = new pg.Client({ connectionString: bench.sys.postgres.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${PGBOSS_DB}`);
  await admin.end();
  const others = [];
  for (const target of TARGETS) {
    others.push({ target, ...(await pgBoss(bench, PgBoss, extraProcesses, target, a.users)) });
    await sleep(1000);
  }

  const SERVICES = Object.keys(a.cpuMs).filter((name) => name !== 'nats-server' && name !== 'bench');
  const sum = (figures, names) => names.reduce((total, name) => total + (figures.cpuMs[name] ?? 0), 0);
  const row = (label, values, digits) =>
    console.log(`${label.padEnd(34)}${values.map((v) => v.toFixed(digits).padStart(22)).join('')}`);
  console.log(
    `\ndelay 0, ${TOTAL} messages (${ACCOUNTS} accounts × ${PER_ACCOUNT}); pg-boss ${version}, ${WORKER_SETUP}; load average ${load()}`,
  );
  const mine = [a, sendOnly];
  console.log(
    `${''.padEnd(34)}${[...mine.map((m) => `ours (${m.label})`), ...others.map((o) => `pg-boss → ${o.target}`)].map((h) => h.padStart(22)).join('')}`,
  );
  const all = [...mine, ...others];
  row(
    'messages/s',
    all.map((f) => f.rate),
    0,
  );
  row(
    'Postgres commits / message',
    all.map((f) => f.commits),
    2,
  );
  row(
    'Postgres statements / message',
    all.map((f) => f.statements),
    1,
  );
  row(
    'Postgres CPU ms / message',
    all.map((f) => f.postgresMs),
    2,
  );
  row(
    'Postgres WAL bytes / message',
    all.map((f) => f.walBytes),
    0,
  );
  row(
    'nats-server CPU ms / message',
    all.map((f) => f.cpuMs['nats-server']),
    2,
  );
  // Ours: the services doing the work; pg-boss: this process (pg-boss, its worker, the echo responder)
  // and, for the sessions target, the services too (sessions does its sends; jobs hears their events).
  const appMs = [
    ...mine.map((m) => sum(m, SERVICES)),
    ...others.map((o) => o.cpuMs.bench + (o.target === 'sessions' ? sum(o, SERVICES) : 0)),
  ];
  row('app CPU ms / message', appMs, 2);
  // All of it: the machine's cores are the limit, so throughput goes as 1 / (CPU per message).
  const allMs = (f, app) => f.postgresMs + f.cpuMs['nats-server'] + app;
  const totalMs = all.map((f, i) => allMs(f, appMs[i] + (i < mine.length ? f.cpuMs.bench : 0)));
  row('all CPU ms / message', totalMs, 2);
  for (const o of others) {
    console.log(
      `throughput ours / pg-boss → ${o.target}: send only ${(sendOnly.rate / o.rate).toFixed(2)}× (both on work queued beforehand); accept + send ${(a.rate / o.enqueueRate).toFixed(2)}× (ours from the start calls, pg-boss from its enqueue: ${o.enqueueRate.toFixed(0)} jobs/s)`,
    );
  }
  // A ceiling: ours with the jobs service and its Postgres connections costing nothing at all. What is
  // left is sessions, NATS, the gateway hearing the events and Postgres for sessions, which the
  // pipeline pays for whatever the queue does.
  const jobsMs = (sendOnly.cpuMs.jobs ?? 0) + (sendOnly.postgresByRoleMs?.jobs ?? 0);
  const sessionsTarget = others.findIndex((o) => o.target === 'sessions');
  if (sessionsTarget !== -1) {
    const theirs = totalMs[mine.length + sessionsTarget];
    const rest = totalMs[1] - jobsMs;
    console.log(
      `ours (send only) without the jobs service's own cost (${jobsMs.toFixed(2)} ms: its CPU and its Postgres connections'): ${rest.toFixed(2)} ms/message, ` +
        `so at most ${(theirs / rest).toFixed(2)}× pg-boss → sessions (${theirs.toFixed(2)} ms/message) on the same cores`,
    );
  }
  console.log(
    `(app CPU: ours = ${SERVICES.join(' + ')}; pg-boss = the bench process (pg-boss, its worker, the echo responder), plus those services for → sessions)`,
  );

  // More rounds of the pair, pg-boss first in every other one, so the machine's drift during the run
  // (its speed moves ±15% from one minute to the next here) falls on both sides alike.
  if (ROUNDS > 0 && sessionsTarget !== -1) {
    const pairs = [
      {
        ours: sendOnly.rate,
        theirs: others[sessionsTarget].rate,
        oursMs: totalMs[1],
        theirsMs: totalMs[mine.length + sessionsTarget],
      },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      const oursRound = () =>
        ours(bench, extraProcesses, { scheduled: true, users: a.users, phoneBase: 75_000_000 + round * 10_000 });
      const theirsRound = () => pgBoss(bench, PgBoss, extraProcesses, 'sessions', a.users);
      let o;
      let t;
      if (round % 2 === 1) {
        t = await theirsRound();
        await sleep(1000);
        o = await oursRound();
      } else {
        o = await oursRound();
        await sleep(1000);
        t = await theirsRound();
      }
      await sleep(1000);
      pairs.push({
        ours: o.rate,
        theirs: t.rate,
        oursMs: allMs(o, sum(o, SERVICES) + o.cpuMs.bench),
        theirsMs: allMs(t, t.cpuMs.bench + sum(t, SERVICES)),
      });
    }
    console.log(
      `\nsend only against pg-boss → sessions, ${pairs.length} rounds (${TOTAL} messages each; the first as above, then ${ROUNDS} more, pg-boss first in every other):`,
    );
    pairs.forEach((p, i) =>
      console.log(
        `  round ${i + 1}: ours ${p.ours.toFixed(0)} messages/s at ${p.oursMs.toFixed(2)} ms CPU each, pg-boss ${p.theirs.toFixed(0)} jobs/s at ${p.theirsMs.toFixed(2)} ms: ${(p.ours / p.theirs).toFixed(2)}×`,
      ),
    );
    const ratios = pairs.map((p) => p.ours / p.theirs).sort((x, y) => x - y);
    const median =
      ratios.length % 2
        ? ratios[(ratios.length - 1) / 2]
        : (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
    console.log(
      `throughput ours / pg-boss → sessions over ${ratios.length} rounds: median ${median.toFixed(2)}×, min ${ratios[0].toFixed(2)}×, max ${ratios.at(-1).toFixed(2)}×; rounds at or above 1×: ${ratios.filter((r) => r >= 1).length} of ${ratios.length}`,
    );
  }
} finally {
  await bench.stop();
}
