#!/usr/bin/env node
// Many accounts start a job at the same moment: every account (linked, simulated engine) calls
// POST /start-bulk-messages with a job of `recipients` numbers at once. Prints the time until every
// start was accepted (200) and each start's latency (p50, p99, max), the starts the gateway shed (503/429,
// tried again after Retry-After with the same Idempotency-Key, as jobs-lib's startJob does) and the
// machine's load. The jobs send at the spec's pace (SEND_DELAY_MS=4000) meanwhile.
// BENCH_PROFILE=jobs (or gateway) CPU-profiles that service over the starts (jobs-lib.mjs); BENCH_METER=1
// prints jobs-lib's meter over them, per start (every process's CPU, Postgres statements and row writes).
//   flock /tmp/bench.lock node scripts/bench/job-starts.mjs [accounts=1000] [recipients=50]
import { cpus, loadavg } from 'node:os';
import { useNode24 } from '../runtime.mjs';
import {
  linkedUsers,
  meter,
  numbers,
  percentile,
  profileFromNow,
  sleep,
  startBench,
  startJob,
  startRetried,
} from './jobs-lib.mjs';
import { cpuSeconds } from './proc-lib.mjs';

await useNode24();

const ACCOUNTS = Number(process.argv[2] ?? 1000);
const RECIPIENTS = Number(process.argv[3] ?? 50);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

console.log(`${cpus().length} cores, load average ${load()}`);
/** The jobs service's own account of each start (its "start timings" log line): waited for its turn, stored. */
const timings = [];
const bench = await startBench(
  { SEND_DELAY_MS: '4000', SEND_JITTER_MS: '0', LOG_LEVEL: 'info' },
  {
    onLine: (label, line) => {
      if (label === 'jobs' && line.includes('start timings')) timings.push(line);
    },
  },
);
try {
  const users = await linkedUsers(bench, ACCOUNTS, 'starts');
  // Warm-up: a few starts pay for JIT and connections.
  await Promise.all(
    users.slice(0, 5).map((u) => startJob(u, { message: 'warm-up', phoneNumbers: numbers(2, 50_000_000) })),
  );
  await sleep(6000);
  const jobsPid = bench.jobsPid;
  const gatewayPid = bench.sys.gateway.process.pid;
  const cpu0 = [cpuSeconds(jobsPid).own, cpuSeconds(gatewayPid).own];
  const load0 = load();
  const retried0 = startRetried();
  timings.length = 0;
  const latencies = [];
  const metered = process.env.BENCH_METER === '1' ? await meter(bench, { top: 20 }) : undefined;
  await metered?.start();
  const stopProfile = await profileFromNow();
  const t0 = performance.now();
  await Promise.all(
    users.map(async (u, i) => {
      const s = performance.now();
      await startJob(u, { message: `start ${i}`, phoneNumbers: numbers(RECIPIENTS, 60_000_000) });
      latencies.push(performance.now() - s);
    }),
  );
  const allS = (performance.now() - t0) / 1000;
  await stopProfile();
  if (metered) {
    await metered.report(
      `${ACCOUNTS} starts of ${RECIPIENTS} recipients (per start; the sending meanwhile included)`,
      ACCOUNTS,
    );
    await metered.stop();
  }
  const sorted = latencies.sort((a, b) => a - b);
  const cpu = [cpuSeconds(jobsPid).own - cpu0[0], cpuSeconds(gatewayPid).own - cpu0[1]];
  console.log(
    `job-starts ${ACCOUNTS} accounts × ${RECIPIENTS} recipients at once: all accepted in ${allS.toFixed(1)} s ` +
      `(${(ACCOUNTS / allS).toFixed(0)} starts/s); per start p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, max ${sorted.at(-1).toFixed(0)} ms; ` +
      `${startRetried() - retried0} shed and tried again; CPU per start: jobs ${((cpu[0] * 1000) / ACCOUNTS).toFixed(1)} ms, gateway ${((cpu[1] * 1000) / ACCOUNTS).toFixed(1)} ms; load ${load0} → ${load()} on ${cpus().length} cores`,
  );
  // Each start once its turn came in jobs (JOBS_START_CONCURRENCY at a time): checked, stored and committed.
  const own = timings.map((l) => JSON.parse(l));
  const stored = own.map((t) => t.storeMs).sort((a, b) => a - b);
  const waited = own.map((t) => t.queuedMs).sort((a, b) => a - b);
  if (stored.length > 0)
    console.log(
      `  in jobs, ${stored.length} starts (its "start timings" log): stored in p50 ${percentile(stored, 50)} ms, p99 ${percentile(stored, 99)} ms, max ${stored.at(-1)} ms; ` +
        `waited for a turn p50 ${percentile(waited, 50)} ms, p99 ${percentile(waited, 99)} ms (the time to the 200 above is the figure users live)`,
    );
} finally {
  await bench.stop();
}
