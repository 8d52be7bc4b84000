#!/usr/bin/env node
// A 50,000-recipient job: how long the start call takes (validation, link check, every recipient
// stored in one transaction) and the jobs service's RSS while the job runs. Real Postgres and NATS,
// the built services (build first: npx tsc -p services/jobs/tsconfig.build.json, and the gateway).
//   node scripts/bench/jobs-accept.mjs [recipients=50000] [runSeconds=15]
import { mib, numbers, rssKiB, sleep, startBench, startJob, linkedUsers } from './jobs-lib.mjs';

const N = Number(process.argv[2] ?? 50_000);
const RUN_SECONDS = Number(process.argv[3] ?? 15);

// A short delay, so the job really works through its recipients while RSS is sampled.
const bench = await startBench({ SEND_DELAY_MS: '50' });
try {
  const [user] = await linkedUsers(bench, 1, 'accept');
  // Warm-up: the first job pays for JIT and connection set-up.
  await startJob(user, { message: 'warm-up', phoneNumbers: numbers(10, 50_000_000) });
  await sleep(1000);
  const idle = rssKiB(bench.jobsPid);

  const body = { message: 'Hello from the bulk benchmark', phoneNumbers: numbers(N) };
  const bytes = Buffer.byteLength(JSON.stringify(body));
  const t0 = performance.now();
  const { jobId, estimatedTime } = await startJob(user, body);
  const acceptMs = performance.now() - t0;

  let peak = rssKiB(bench.jobsPid);
  const started = Date.now();
  while (Date.now() - started < RUN_SECONDS * 1000) {
    await sleep(250);
    peak = Math.max(peak, rssKiB(bench.jobsPid));
  }
  const s0 = performance.now();
  const status = await user.client.get(`/job-status/${jobId}`);
  const statusMs = performance.now() - s0;
  const l0 = performance.now();
  const logs = await user.client.get(`/job-logs/${jobId}`);
  const logsMs = performance.now() - l0;

  console.log(
    `recipients: ${N} (request body ${(bytes / 1024).toFixed(0)} KiB), estimatedTime ${estimatedTime} min (with this run's SEND_DELAY_MS=50)`,
  );
  console.log(`accepted in ${acceptMs.toFixed(0)} ms (POST /start-bulk-messages → 200, all recipients stored)`);
  console.log(`jobs RSS: idle ${mib(idle)} MiB, peak while running ${mib(peak)} MiB over ${RUN_SECONDS} s`);
  console.log(
    `after ${RUN_SECONDS} s: sent ${status.body.job.progress.sent}; GET /job-status ${statusMs.toFixed(0)} ms ` +
      `(${status.body.job.results.successList.length} list entries), GET /job-logs ${logsMs.toFixed(0)} ms (${logs.body.logs.length} entries)`,
  );
  await user.client.post(`/cancel-job/${jobId}`);
} finally {
  await bench.stop();
}
