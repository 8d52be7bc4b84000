#!/usr/bin/env node
// Pacing under load: N accounts (default 1000) each run a job at once; for every account the gaps
// between its messages as the simulated phone received them are compared with SEND_DELAY_MS.
// Prints the median and p99 of |actual gap − configured gap|, and for the sending once every job has
// started, Postgres commits, statements and CPU per message by process. Build first (jobs, sessions, gateway).
//   node scripts/bench/jobs-pacing.mjs [accounts=1000] [delayMs=4000] [messagesPerJob=6]
import {
  countResults,
  linkedUsers,
  meter,
  mib,
  numbers,
  percentile,
  pool,
  rssKiB,
  sleep,
  startBench,
  startJob,
  waitFor,
} from './jobs-lib.mjs';

const ACCOUNTS = Number(process.argv[2] ?? 1000);
const DELAY_MS = Number(process.argv[3] ?? 4000);
const PER_JOB = Number(process.argv[4] ?? 6);

const bench = await startBench({
  SEND_DELAY_MS: String(DELAY_MS),
  SEND_JITTER_MS: '0',
  DATABASE_POOL_SIZE: process.env.JOBS_POOL ?? '10',
});
const results = countResults(bench.nc);
const metered = await meter(bench, { top: 12 });
try {
  let t = performance.now();
  const users = await linkedUsers(bench, ACCOUNTS, 'pacing', 40);
  console.log(`linked ${ACCOUNTS} accounts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await sleep(2000);

  t = performance.now();
  const jobs = await pool(ACCOUNTS, 50, (i) =>
    startJob(users[i], { message: `Hello account ${i}`, phoneNumbers: numbers(PER_JOB) }),
  );
  console.log(`started ${ACCOUNTS} jobs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  // What sending at the policy's pace costs, once no more starts come in.
  await metered.start();
  const sentBefore = results.total;
  const meteredFrom = performance.now();
  let peak = 0;
  await waitFor(
    () => {
      peak = Math.max(peak, rssKiB(bench.jobsPid));
      return results.total >= ACCOUNTS * PER_JOB;
    },
    PER_JOB * DELAY_MS + 600_000,
    200,
    'every message',
  );

  const meteredS = (performance.now() - meteredFrom) / 1000;
  const meteredMessages = Math.max(1, results.total - sentBefore);
  const figures = await metered.report(
    `sending at the pace, ${meteredMessages} messages in ${meteredS.toFixed(1)} s`,
    meteredMessages,
  );
  const share = (ms) => `${((ms * meteredMessages) / (meteredS * 10)).toFixed(1)}%`;
  console.log(
    `  share of one core while sending: postgres ${share(figures.postgresMs)}, ` +
      Object.entries(figures.cpuMs)
        .map(([name, ms]) => `${name} ${share(ms)}`)
        .join(', '),
  );
  const gaps = [];
  await pool(ACCOUNTS, 50, async (i) => {
    const { messages } = await bench.rpc.call('sessions.simulator.outbox', { userId: users[i].userId });
    const times = messages
      .filter((m) => m.idempotencyKey.startsWith(`${jobs[i].jobId}:`))
      .map((m) => Date.parse(m.at))
      .sort((a, b) => a - b);
    if (times.length !== PER_JOB) throw new Error(`account ${i}: ${times.length} messages, expected ${PER_JOB}`);
    for (let k = 1; k < times.length; k++) gaps.push(times[k] - times[k - 1]);
  });
  const errors = gaps.map((g) => Math.abs(g - DELAY_MS)).sort((a, b) => a - b);
  const short = gaps.filter((g) => g < DELAY_MS).length;
  console.log(
    `${ACCOUNTS} accounts × ${PER_JOB} messages, SEND_DELAY_MS=${DELAY_MS} (${((ACCOUNTS * 1000) / DELAY_MS).toFixed(0)} messages/s overall)`,
  );
  console.log(
    `|actual gap − configured gap| over ${gaps.length} gaps: median ${percentile(errors, 50)} ms, p99 ${percentile(errors, 99)} ms, max ${errors.at(-1)} ms; gaps shorter than configured: ${short} (shortest ${Math.min(...gaps)} ms)`,
  );
  console.log(`jobs RSS peak during the run: ${mib(peak)} MiB`);
} finally {
  await metered.stop();
  results.stop();
  await bench.stop();
}
