#!/usr/bin/env node
// Accepting a large job, plain and personalised: POST /start-bulk-messages with `recipients` numbers
// (plain: one message for all; personalised: a template with 4 variables and each row's values), timed
// to the 200 (every recipient stored), and the jobs service's RSS just before, at its peak (sampled
// every 25 ms from the call until `afterSeconds` later) and `afterSeconds` after the 200: whether the
// memory a start takes comes back, with its V8 heap (used of total) and external memory before and after
// (its /metrics), to tell the heap from the rest. Sending is slowed right down (this measures accepting).
// BENCH_PROFILE=jobs CPU-profiles the jobs service over each start (jobs-lib.mjs).
//   flock /tmp/bench.lock node scripts/bench/accept-50k.mjs [recipients=50000] [afterSeconds=60]
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { useNode24 } from '../runtime.mjs';
import { linkedUsers, mib, numbers, profileFromNow, rssKiB, sleep, startBench } from './jobs-lib.mjs';
import { cpuSeconds, scrapeMetrics } from './proc-lib.mjs';

await useNode24();

const N = Number(process.argv[2] ?? 50_000);
const AFTER_S = Number(process.argv[3] ?? 60);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const plain = (n, from) => ({ message: 'Hello from the bulk benchmark', phoneNumbers: numbers(n, from) });
const personalised = (n, from) => ({
  message: 'Hi {{name}}, your order {{order}} ships to {{district}} on {{date}}',
  recipients: numbers(n, from).map((phone, i) => ({
    phone,
    variables: {
      name: `Customer ${i}`,
      order: `HK-${100000 + i}`,
      district: ['Central', 'Wan Chai', 'Sha Tin', 'Tsuen Wan'][i % 4],
      date: '2026-12-01',
    },
  })),
});

console.log(`${cpus().length} cores, load average ${load()}`);
/** The jobs service's own account of each start (its "start timings" log line): queued, read, stored. */
const timings = [];
const bench = await startBench(
  { SEND_DELAY_MS: '600000', JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: '1000000', LOG_LEVEL: 'info' },
  {
    onLine: (label, line) => {
      if (label === 'jobs' && line.includes('start timings')) timings.push(line);
    },
  },
);
const pid = bench.jobsPid;
const jobs = bench.sys.services.find((h) => h.name === 'jobs').process;
/** The jobs service's RSS, or a clear end of the run when it is gone (its last lines printed). */
const rss = () => {
  if (!jobs.running) {
    console.error(`the jobs service exited; its last lines:\n${jobs.tail(30)}`);
    process.exit(1);
  }
  return rssKiB(pid);
};
/** The jobs service's V8 heap (used of total) and the memory outside it, from its /metrics: where its RSS is. */
const jobsMetricsUrl = bench.sys.services.find((h) => h.name === 'jobs').metricsUrl;
const heap = async () => {
  const bytes = await scrapeMetrics(jobsMetricsUrl);
  const mb = (b) => (b / 1048576).toFixed(1);
  return `heap ${mb(bytes('nodejs_heap_size_used_bytes'))} of ${mb(bytes('nodejs_heap_size_total_bytes'))} MiB, external ${mb(bytes('nodejs_external_memory_bytes'))} MiB`;
};
const lines = [];
try {
  const users = await linkedUsers(bench, 2, 'accept50k');
  const post = (u, body) =>
    u.client.post('/start-bulk-messages', { clerkUserId: u.userId, ...body }, { 'Idempotency-Key': randomUUID() });
  // Warm-up: JIT, the object store's bucket, connections.
  await post(users[0], plain(10, 50_000_000));
  await post(users[1], personalised(10, 50_000_000));
  await sleep(3000);
  for (const [kind, make, user] of [
    ['plain', plain, users[0]],
    ['personalised (4 variables)', personalised, users[1]],
  ]) {
    const body = make(N, 60_000_000);
    const mb = Buffer.byteLength(JSON.stringify(body)) / 1048576;
    const heapBefore = await heap();
    const before = rss();
    const load0 = load();
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, rss())), 25);
    const cpu0 = cpuSeconds(pid).own;
    const stopProfile = await profileFromNow();
    const seen = timings.length;
    const t0 = performance.now();
    const res = await post(user, body);
    const ms = performance.now() - t0;
    await stopProfile();
    // The start's own timings line may reach this process a moment after its answer.
    for (let i = 0; i < 40 && timings.length === seen; i++) await sleep(50);
    const own = JSON.parse(timings.length > seen ? timings.at(-1) : '{}');
    const cpuMs = (cpuSeconds(pid).own - cpu0) * 1000;
    if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    await sleep(AFTER_S * 1000);
    clearInterval(timer);
    const after = rss();
    const heapAfter = await heap();
    lines.push(
      `accept-50k ${kind}, ${N} recipients (body ${mb.toFixed(1)} MiB): accepted in ${ms.toFixed(0)} ms (jobs CPU ${cpuMs.toFixed(0)} ms); ` +
        `in jobs: waited ${own.queuedMs} ms, read the staged body ${own.readMs} ms, checked and stored ${own.storeMs} ms; ` +
        `jobs RSS ${mib(before)} MiB before, ${mib(peak)} MiB peak, ${mib(after)} MiB ${AFTER_S} s after ` +
        `(before: ${heapBefore}; after: ${heapAfter}); load ${load0} → ${load()}`,
    );
    console.log(lines.at(-1));
    await user.client.post(`/cancel-job/${res.body.jobId}`);
    await sleep(2000);
  }
  console.log(`\n${lines.join('\n')}`);
} finally {
  await bench.stop();
}
