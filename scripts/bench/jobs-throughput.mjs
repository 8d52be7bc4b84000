#!/usr/bin/env node
// Messages per second through jobs → sessions (simulated engine) → events, with SEND_DELAY_MS=0.
// One account sends one message at a time by design, so a single job measures the per-message
// round trip; many accounts at once measure what the service does in aggregate.
// Build first (services/jobs, services/sessions, services/gateway).
//   node scripts/bench/jobs-throughput.mjs [perJob=1000] [accounts=20]
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

const PER_JOB = Number(process.argv[2] ?? 1000);
const ACCOUNTS = Number(process.argv[3] ?? 20);

const bench = await startBench({ SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' });
const results = countResults(bench.nc);
const metered = await meter(bench);
try {
  const users = await linkedUsers(bench, ACCOUNTS, 'throughput');
  await warmUp(users[0], results);
  await sleep(500);

  // One account: its messages strictly one after another.
  let before = results.total;
  let t0 = performance.now();
  const single = await startJob(users[0], { message: 'single account', phoneNumbers: numbers(PER_JOB) });
  await waitFor(() => results.of(single.jobId) >= PER_JOB, 600_000, 20, 'single job');
  const singleRate = PER_JOB / ((performance.now() - t0) / 1000);

  // Many accounts at once.
  await sleep(1000);
  await metered.start();
  before = results.total;
  t0 = performance.now();
  await Promise.all(
    users.map((u, i) => startJob(u, { message: `account ${i}`, phoneNumbers: numbers(PER_JOB, 70_000_000) })),
  );
  await waitFor(() => results.total - before >= PER_JOB * ACCOUNTS, 900_000, 20, 'all jobs');
  const manyRate = (PER_JOB * ACCOUNTS) / ((performance.now() - t0) / 1000);
  // The last outbox rows and receipts settle, then the figures are read.
  await sleep(1500);
  await metered.report(`${ACCOUNTS} accounts`, PER_JOB * ACCOUNTS);

  console.log(
    `delay 0, one account, ${PER_JOB} messages: ${singleRate.toFixed(0)} messages/s (start call → its completion reported on NATS)`,
  );
  console.log(
    `delay 0, ${ACCOUNTS} accounts × ${PER_JOB} messages at once: ${manyRate.toFixed(0)} messages/s in aggregate (${startRetried()} starts shed with 503/429 and tried again)`,
  );
} finally {
  await metered.stop();
  results.stop();
  await bench.stop();
}
