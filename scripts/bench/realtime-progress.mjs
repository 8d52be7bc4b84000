#!/usr/bin/env node
// Live progress at scale: N signed-in users each hold a socket.io connection to the gateway
// (as the web app does), J of them link their simulated WhatsApp and run a job at the spec's pace, and
// every job_progress a socket receives is timed from the event's own `at` (the jobs service's clock,
// the same machine) to its arrival. Printed:
//   - job_progress latency p50/p99/max, split into `at` → NATS (the jobs service: rest of its
//     transaction, commit, outbox publish; seen by a plain NATS subscriber in this process) and
//     NATS → socket (the gateway's fan-out and the socket write);
//   - gateway RSS before and after the sockets (memory per socket), and BENCH_AFTER_CLOSE_S (30) after
//     they all closed (whether it comes back);
//   - CPU seconds of every process over the measured window (from /proc/<pid>/stat), the event-loop
//     delay of jobs and the gateway, and how many lane steps shared each jobs transaction (their /metrics);
//   - tenant isolation: every job event a socket receives must belong to that socket's user's job, and
//     users without a job or a link must receive no job or session event at all; violations are counted
//     and printed.
// Build first. GATEWAY_PROFILE=1 / JOBS_PROFILE=1 also CPU-profile that service during the window and
// print where its time goes. PG_STATS=1 loads pg_stat_statements and prints the statements that took
// the most Postgres time in the window (mean and max per call: a saturated Postgres shows here first).
// TRANSPORTS=websocket skips the polling handshake (the web starts with polling).
//   flock /tmp/bench.lock node scripts/bench/realtime-progress.mjs [sockets=2000] [jobs=100] [seconds=30] [delayMs=4000]
import { cpuSeconds, postgresCpu } from './proc-lib.mjs';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { io } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import { connectNats, RpcClient } from '@bns/service-kit';
import { api, devSignIn, sleep, startPostgres, startSystem, waitFor } from '@bns/testing';
import { numbers, percentile, pool, rssKiB, startJob } from './jobs-lib.mjs';
import { collectGarbage, profileProcess } from './profile-lib.mjs';

const SOCKETS = Number(process.argv[2] ?? 2000);
/** Seconds the gateway is left alone after every socket closed, before its RSS is read again (BENCH_AFTER_CLOSE_S). */
const AFTER_CLOSE_S = Number(process.env.BENCH_AFTER_CLOSE_S ?? 30);
const JOBS = Number(process.argv[3] ?? 100);
const SECONDS = Number(process.argv[4] ?? 30);
const DELAY_MS = Number(process.argv[5] ?? 4000);
const WARMUP_S = 5;
// Enough recipients that every job is still sending when the window closes.
const RECIPIENTS = Math.ceil(((WARMUP_S + SECONDS + 30) * 1000) / Math.max(1, DELAY_MS)) + 5;
const TRANSPORTS = process.env.TRANSPORTS ? process.env.TRANSPORTS.split(',') : [...SOCKET.transports];
const SHARDS = 2;
const PROFILE_PORTS = { gateway: 9339, jobs: 9340 };
const PG_STATS = process.env.PG_STATS === '1';
const PROFILED = Object.keys(PROFILE_PORTS).filter((name) => process.env[`${name.toUpperCase()}_PROFILE`] === '1');

const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const ms = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const dist = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return `p50 ${ms(percentile(s, 50))} ms, p90 ${ms(percentile(s, 90))} ms, p99 ${ms(percentile(s, 99))} ms, max ${ms(s.at(-1))} ms (n=${s.length})`;
};

const postgres = await startPostgres(
  PG_STATS
    ? { flags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'] }
    : {},
);
const sys = await startSystem({
  postgres,
  shards: SHARDS,
  services: ['sessions', 'jobs', 'dashboard'],
  env: { SIM_READY_DELAY_MS: '0', SIM_QR_INTERVAL_MS: '20000', AUTO_LOGIN_PREF_TIMEOUT_MS: '100', LOG_LEVEL: 'warn' },
  serviceEnv: {
    jobs: {
      SEND_DELAY_MS: String(DELAY_MS),
      SEND_JITTER_MS: '0',
      ...(PROFILED.includes('jobs') ? { NODE_OPTIONS: `--inspect=127.0.0.1:${PROFILE_PORTS.jobs}` } : {}),
    },
    // Every user signs in from this one address.
    gateway: {
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
      ...(PROFILED.includes('gateway') ? { NODE_OPTIONS: `--inspect=127.0.0.1:${PROFILE_PORTS.gateway}` } : {}),
    },
  },
});
const url = sys.gateway.url;
const nc = await connectNats(sys.nats.url, 'bench-realtime');
const rpc = new RpcClient(nc, { shards: SHARDS, timeoutMs: 30_000 });
const db = new pg.Client({ connectionString: sys.postgres.url });
const sockets = [];
try {
  await db.connect();
  const postmaster = cpuSeconds((await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).ppid;
  const procs = [
    ...sys.services.map((h) => ({ label: h.label, pid: h.process.pid })),
    { label: 'nats', pid: sys.nats.process.pid },
    { label: 'bench client', pid: process.pid },
  ];
  const cpuSnapshot = () => ({
    ...Object.fromEntries(procs.map((p) => [p.label, cpuSeconds(p.pid).own])),
    postgres: postgresCpu(postmaster),
  });
  const gatewayPid = sys.gateway.process.pid;
  log(
    `system up; ${cpus().length} cores, load average ${load()}; ${SOCKETS} sockets (${TRANSPORTS.join(' then ')}), ${JOBS} jobs of ${RECIPIENTS} recipients at ${DELAY_MS} ms`,
  );

  // --- users
  let t = performance.now();
  const users = await pool(SOCKETS, 32, async (i) => {
    const s = await devSignIn(url, `rt${i}@bench.hk`);
    return { index: i, userId: s.userId, token: s.token, http: api(url, s.token), linked: false };
  });
  const byUserId = new Map(users.map((u) => [u.userId, u]));
  if (byUserId.size !== SOCKETS) throw new Error(`${SOCKETS} sign-ins gave ${byUserId.size} distinct users`);
  log(`${SOCKETS} users signed in in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // --- what every socket receives, checked against whose socket it is
  const jobOwner = new Map(); // jobId → userId
  const violations = [];
  const unresolved = [];
  let startsPending = false;
  const latency = []; // at → socket, job_progress, in the window
  const viaSocket = new Map(); // progress key → socket arrival (ms since epoch)
  const viaNats = new Map(); // progress key → NATS arrival
  const received = { job_progress: 0, job_log: 0, message_status: 0, session: 0 };
  let measuring = false;
  let disconnects = 0;
  const progressKey = (jobId, e) =>
    `${jobId}:${e.status}:${e.progress.sent}:${e.progress.failed}:${e.progress.skipped ?? 0}:${e.nextSendAt ?? '-'}`;
  const violation = (u, what) => {
    if (violations.length < 20) violations.push(`socket of user #${u.index} got ${what}`);
    else violations.push(null);
  };
  const onJobEvent = (u, name, payload) => {
    received[name]++;
    const owner = jobOwner.get(payload?.jobId);
    // An event can beat the start's answer: it is checked once every job id is known.
    if (owner === undefined && startsPending) unresolved.push({ u, name, jobId: payload?.jobId });
    else if (owner !== u.userId) violation(u, `${name} of a job that is not theirs`);
    if (name === 'job_progress' && measuring) {
      u.progressInWindow = (u.progressInWindow ?? 0) + 1;
      const now = Date.now();
      latency.push(now - Date.parse(payload.at));
      viaSocket.set(progressKey(payload.jobId, payload), now);
    }
  };
  const SESSION_EVENTS = [
    'qr',
    'qr_max_attempts',
    'ready',
    'exist',
    'creating',
    'no_session',
    'disconnected',
    'message_received',
  ];

  // --- sockets, opened like the web app's (token in the handshake `auth`)
  const rssBefore = rssKiB(gatewayPid);
  t = performance.now();
  await pool(SOCKETS, 50, async (i) => {
    const u = users[i];
    const s = io(url, {
      path: SOCKET.path,
      transports: TRANSPORTS,
      auth: { token: u.token },
      forceNew: true,
      reconnection: true,
      timeout: SOCKET.timeoutMs,
    });
    sockets.push(s);
    for (const name of ['job_progress', 'job_log', 'message_status']) s.on(name, (p) => onJobEvent(u, name, p));
    for (const name of SESSION_EVENTS) {
      s.on(name, () => {
        received.session++;
        if (!u.linked) violation(u, `a session event (${name}) while only other users were linking`);
      });
    }
    s.on('disconnect', () => disconnects++);
    await new Promise((resolve, reject) => {
      s.once('connect', resolve);
      s.once('connect_error', reject);
    });
    // The web announces itself; the ack says whose socket it is.
    const ack = await s.timeout(30_000).emitWithAck('connected');
    if (ack?.userId !== u.userId) violation(u, `a 'connected' ack for another user`);
  });
  const connectS = (performance.now() - t) / 1000;
  await sleep(3000);
  const rssAfter = rssKiB(gatewayPid);
  log(
    `${SOCKETS} sockets connected in ${connectS.toFixed(1)} s; gateway RSS ${(rssBefore / 1024).toFixed(0)} → ${(rssAfter / 1024).toFixed(0)} MiB ` +
      `(+${((rssAfter - rssBefore) / SOCKETS).toFixed(1)} KiB per socket); load average ${load()}`,
  );

  // --- J users link their simulated WhatsApp and start a job each; the others stay idle.
  const senders = users.filter((_, i) => i % Math.floor(SOCKETS / JOBS) === 0).slice(0, JOBS);
  t = performance.now();
  await pool(senders.length, 20, async (i) => {
    const u = senders[i];
    u.linked = true;
    await rpc.call('sessions.connect', { userId: u.userId, explicit: true });
    await rpc.call('sessions.simulator.scan', { userId: u.userId });
  });
  await waitFor(
    async () =>
      (await pool(senders.length, 50, (i) => rpc.call('sessions.status', { userId: senders[i].userId }))).every(
        (s) => s.state === 'ready' || s.state === 'exist',
      ),
    120_000,
    500,
    'every link ready',
  );
  log(`${senders.length} accounts linked in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const toNats = []; // at → NATS, job_progress, in the window
  const natsSub = nc.subscribe('events.job.progress', {
    callback: (err, msg) => {
      if (err || !measuring) return;
      const e = msg.json();
      const now = Date.now();
      toNats.push(now - Date.parse(e.at));
      viaNats.set(progressKey(e.jobId, e), now);
    },
  });
  t = performance.now();
  startsPending = true;
  await pool(senders.length, 20, async (i) => {
    const u = senders[i];
    const { jobId } = await startJob(
      { userId: u.userId, client: u.http },
      { message: `Hello from shop ${u.index}`, phoneNumbers: numbers(RECIPIENTS) },
    );
    jobOwner.set(jobId, u.userId);
  });
  startsPending = false;
  for (const { u, name, jobId } of unresolved)
    if (jobOwner.get(jobId) !== u.userId) violation(u, `${name} of a job that is not theirs`);
  log(`${senders.length} jobs started in ${((performance.now() - t) / 1000).toFixed(1)} s; warming up ${WARMUP_S} s`);
  await sleep(WARMUP_S * 1000);

  // --- the measured window
  if (PG_STATS) {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
  }
  // prom-client resets its event-loop delay histogram on every scrape: this one opens the window.
  const scraped = (h) => sys.services.find((x) => x.name === h);
  const metric = (text, name) => {
    let sum = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'gm'))) sum += Number(m[1]);
    return sum;
  };
  const scrape = () =>
    Promise.all(['jobs', 'gateway'].map(async (name) => (await fetch(`${scraped(name).metricsUrl}/metrics`)).text()));
  const eventLoop = ([jobsText, gatewayText]) =>
    [
      ['jobs', jobsText],
      ['gateway', gatewayText],
    ].map(([label, text]) => {
      const v = (m) => (metric(text, `nodejs_eventloop_lag_${m}_seconds`) * 1000).toFixed(0);
      return `${label} p50 ${v('p50')} ms, p99 ${v('p99')} ms, max ${v('max')} ms`;
    });
  const jobsWindow = (before, after) => {
    const d = (name) => metric(after, name) - metric(before, name);
    const steps = d('bns_jobs_step_batch_size_sum');
    const txs = d('bns_jobs_step_batch_size_count');
    const lagN = d('bns_jobs_pace_lag_seconds_count');
    return (
      `jobs: ${txs} step transactions holding ${steps} lane steps (${(steps / Math.max(1, txs)).toFixed(1)} per transaction); ` +
      `pace lag (actual − planned send) mean ${((1000 * d('bns_jobs_pace_lag_seconds_sum')) / Math.max(1, lagN)).toFixed(0)} ms over ${lagN} sends`
    );
  };
  const scrapeBefore = await scrape();
  const stopProfiles = await Promise.all(PROFILED.map((name) => profileProcess(name, PROFILE_PORTS[name])));
  const cpuBefore = cpuSnapshot();
  const receivedBefore = { ...received };
  measuring = true;
  const loadStart = load();
  t = performance.now();
  await sleep(SECONDS * 1000);
  measuring = false;
  const wall = (performance.now() - t) / 1000;
  const cpuAfter = cpuSnapshot();
  const scrapeAfter = await scrape();
  const loopDelay = eventLoop(scrapeAfter);
  for (const stop of stopProfiles) await stop();
  natsSub.unsubscribe();

  const natsToSocket = [];
  for (const [key, at] of viaSocket) {
    const n = viaNats.get(key);
    if (n === undefined) continue;
    natsToSocket.push(at - n);
  }
  const sentInWindow = Object.fromEntries(Object.entries(received).map(([k, v]) => [k, v - receivedBefore[k]]));

  log(`window: ${wall.toFixed(1)} s, load average ${loadStart} at the start, ${load()} at the end`);
  log(
    `events received by the sockets in the window: ${Object.entries(sentInWindow)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} (${(sentInWindow.job_progress / wall).toFixed(1)} job_progress/s)`,
  );
  log(`job_progress, event 'at' → socket:  ${dist(latency)}`);
  log(`job_progress, event 'at' → NATS (jobs: rest of its transaction, commit, outbox publish): ${dist(toNats)}`);
  log(`job_progress, NATS → socket (gateway fan-out + socket write): ${dist(natsToSocket)}`);
  console.log(`  event-loop delay in the window (10 ms resolution): ${loopDelay.join('; ')}`);
  console.log(`  ${jobsWindow(scrapeBefore[0], scrapeAfter[0])}`);
  console.log(
    `  CPU seconds in the window (share of one core): ${Object.keys(cpuAfter)
      .map(
        (k) =>
          `${k} ${(cpuAfter[k] - cpuBefore[k]).toFixed(1)} (${((100 * (cpuAfter[k] - cpuBefore[k])) / wall).toFixed(0)}%)`,
      )
      .join(', ')}`,
  );
  if (PG_STATS) {
    const top = await db.query(
      `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, max_exec_time AS max, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS q
         FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT 15`,
    );
    console.log('  Postgres statements by time in the window (calls, total ms, mean ms, max ms):');
    for (const r of top.rows)
      console.log(
        `    ${String(r.calls).padStart(6)} ${Number(r.total).toFixed(0).padStart(7)} ${Number(r.mean).toFixed(2).padStart(7)} ${Number(r.max).toFixed(0).padStart(5)}  ${r.q}`,
      );
  }
  const rssEnd = rssKiB(gatewayPid);
  log(`gateway RSS at the end ${(rssEnd / 1024).toFixed(0)} MiB; socket disconnects during the run: ${disconnects}`);
  // Whether the memory comes back: every socket closed, then the gateway left alone for AFTER_CLOSE_S.
  for (const s of sockets) s.disconnect();
  sockets.length = 0;
  await sleep(AFTER_CLOSE_S * 1000);
  const rssClosed = rssKiB(gatewayPid);
  const gatewayText = (await scrape())[1];
  const gauge = (name) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(gatewayText)?.[1] ?? NaN) / 1048576;
  log(
    `gateway RSS ${AFTER_CLOSE_S} s after all ${SOCKETS} sockets closed: ${(rssClosed / 1024).toFixed(0)} MiB ` +
      `(idle before them ${(rssBefore / 1024).toFixed(0)} MiB: ${(((rssClosed - rssBefore) / rssBefore) * 100).toFixed(0)}% above); ` +
      `V8 heap ${gauge('nodejs_heap_size_used_bytes').toFixed(0)} MiB used of ${gauge('nodejs_heap_size_total_bytes').toFixed(0)}, external ${gauge('nodejs_external_memory_bytes').toFixed(0)} MiB`,
  );
  if (PROFILED.includes('gateway')) {
    // With its inspector on: a full collection, then the RSS again (what V8 had not yet collected).
    await collectGarbage(PROFILE_PORTS.gateway);
    await sleep(2000);
    const rssCollected = rssKiB(gatewayPid);
    const text = (await scrape())[1];
    const used = Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? NaN) / 1048576;
    log(
      `gateway RSS after a full garbage collection: ${(rssCollected / 1024).toFixed(0)} MiB (V8 heap ${used.toFixed(0)} MiB used)`,
    );
  }
  const silent = senders.filter((u) => !u.progressInWindow).length;
  if (silent > 0) log(`${silent} of ${senders.length} senders' sockets received no job_progress in the window`);
  const count = violations.length;
  log(`tenant isolation: ${count} violation(s)${count ? ':\n  ' + violations.filter(Boolean).join('\n  ') : ''}`);
} finally {
  for (const s of sockets) s.disconnect();
  await nc.drain().catch(() => undefined);
  await db.end().catch(() => undefined);
  await sys.stop();
  await postgres.stop();
}
process.exit(0);
