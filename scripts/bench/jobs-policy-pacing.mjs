#!/usr/bin/env node
// Pacing under the `careful` policy: N accounts (default 1000) each run a job at once under careful
// (random 5–15 s gaps, window 09:00–20:00, warm-up); every 10th account also has a daily cap below its
// job's size. For every message the gap the jobs service planned (its random pace, plus a long pause
// when one followed; kept per recipient) is compared with the gap the simulated phone saw.
// Prints the median and p99 of |actual gap − planned gap|, and checks that no account sent outside its
// window or over its cap. Build first (contracts, service-kit, testing, jobs, sessions, gateway).
//   node scripts/bench/jobs-policy-pacing.mjs [accounts=1000] [messagesPerJob=6]
import pg from 'pg';
import { localTime, minutesOfDay } from '@bns/contracts';
import {
  countResults,
  linkedUsers,
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
const PER_JOB = Number(process.argv[3] ?? 6);
const CAPPED_EVERY = 10;
const CAP = Math.max(1, PER_JOB - 2);

// careful's window is 09:00–20:00 local: run in a zone where it is now mid-window, so the run sends
// (the window is still enforced and checked).
const ZONES = [
  'Asia/Hong_Kong',
  'Europe/London',
  'America/New_York',
  'Asia/Tokyo',
  'Europe/Berlin',
  'America/Los_Angeles',
  'Australia/Sydney',
  'Asia/Kolkata',
  'America/Sao_Paulo',
  'Pacific/Honolulu',
];
const timeZone = ZONES.find((z) => {
  const m = localTime(new Date(), z).minutes;
  return m >= 10 * 60 && m <= 18 * 60;
});
if (!timeZone) throw new Error('no time zone in the list is mid-window now');

const bench = await startBench({ DATABASE_POOL_SIZE: process.env.JOBS_POOL ?? '10' });
const results = countResults(bench.nc);
const db = new pg.Pool({ connectionString: bench.sys.postgres.url, max: 10 });
try {
  let t = performance.now();
  const users = await linkedUsers(bench, ACCOUNTS, 'careful', 40);
  console.log(`linked ${ACCOUNTS} accounts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const capped = (i) => i % CAPPED_EVERY === 0;
  const policies = await pool(ACCOUNTS, 50, async (i) => {
    const update = { preset: 'careful', timeZone, ...(capped(i) ? { dailyCap: CAP } : {}) };
    // A kept-alive connection the gateway just closed fails the fetch: ask again (PUT is idempotent).
    let res;
    for (let attempt = 1; !res; attempt++) {
      try {
        res = await users[i].client.put(`/api/sending-policy/${users[i].userId}`, update);
      } catch (err) {
        if (attempt >= 3) throw err;
        await sleep(200);
      }
    }
    if (res.status !== 200) throw new Error(`policy ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.policy;
  });
  console.log(
    `policy: careful in ${timeZone} (delay ${policies[1].delayMs} + jitter 0..${policies[1].jitterMs} ms, window ${policies[1].window.start}–${policies[1].window.end}, warm-up on); every ${CAPPED_EVERY}th account capped at ${CAP}/day`,
  );
  await sleep(2000);

  t = performance.now();
  const jobs = await pool(ACCOUNTS, 50, (i) =>
    startJob(users[i], { message: `{Hello|Hi|Hey} account ${i}`, phoneNumbers: numbers(PER_JOB) }),
  );
  console.log(`started ${ACCOUNTS} jobs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  // Gaps that begin once every job is in: the steady state, without the start burst competing for the CPU.
  const allStarted = Date.now();
  const expected = users.reduce((n, _, i) => n + (capped(i) ? Math.min(CAP, PER_JOB) : PER_JOB), 0);
  let peak = 0;
  await waitFor(
    () => {
      peak = Math.max(peak, rssKiB(bench.jobsPid));
      return results.total >= expected;
    },
    PER_JOB * 20_000 + 600_000,
    500,
    'every message allowed today',
  );
  await sleep(3000); // anything over a cap would show up now

  const errors = [];
  const steady = [];
  let outsideWindow = 0;
  let overCap = 0;
  let cappedPaused = 0;
  const start = minutesOfDay(policies[1].window.start);
  const end = minutesOfDay(policies[1].window.end);
  await pool(ACCOUNTS, 50, async (i) => {
    const { jobId } = jobs[i];
    const { messages } = await bench.rpc.call('sessions.simulator.outbox', { userId: users[i].userId });
    const sent = messages
      .filter((m) => m.idempotencyKey.startsWith(`${jobId}:`))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    const { rows } = await db.query(`SELECT phone, paced_ms FROM jobs.job_recipients WHERE job_id = $1`, [jobId]);
    const planned = new Map(rows.map((r) => [r.phone, r.paced_ms]));
    for (let k = 1; k < sent.length; k++) {
      const gap = Date.parse(sent[k].at) - Date.parse(sent[k - 1].at);
      const error = Math.abs(gap - planned.get(sent[k - 1].to));
      errors.push(error);
      if (Date.parse(sent[k - 1].at) >= allStarted) steady.push(error);
    }
    for (const m of sent) {
      const local = localTime(new Date(m.at), timeZone);
      if (local.minutes < start || local.minutes >= end) outsideWindow++;
    }
    const limit = capped(i) ? CAP : Infinity;
    if (sent.length > limit) overCap++;
    if (capped(i)) {
      const { job } = await bench.rpc.call('jobs.status', { userId: users[i].userId, jobId });
      if (job.status === 'paused' && job.pausedReason === 'daily_cap') cappedPaused++;
    }
  });
  errors.sort((a, b) => a - b);
  steady.sort((a, b) => a - b);
  const cappedCount = users.filter((_, i) => capped(i)).length;
  console.log(
    `${ACCOUNTS} accounts × ${PER_JOB} messages under careful (${cappedCount} capped at ${CAP}/day), ${expected} messages`,
  );
  console.log(
    `|actual gap − planned gap| over ${errors.length} gaps: median ${percentile(errors, 50)} ms, p99 ${percentile(errors, 99)} ms, max ${errors.at(-1)} ms`,
  );
  console.log(
    `  of which ${steady.length} gaps after every job was accepted: median ${percentile(steady, 50)} ms, p99 ${percentile(steady, 99)} ms`,
  );
  console.log(
    `sends outside the window: ${outsideWindow}; accounts over their cap: ${overCap}; capped accounts paused with daily_cap: ${cappedPaused}/${cappedCount}`,
  );
  console.log(`jobs RSS peak during the run: ${mib(peak)} MiB`);
} finally {
  await db.end().catch(() => undefined);
  results.stop();
  await bench.stop();
}
