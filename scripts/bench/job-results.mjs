#!/usr/bin/env node
// Campaign results at 50,000 recipients, against the built services on a private Postgres
// and NATS:
//  1. a 50,000-row personalised start (4 variable columns, staged through the JetStream object store):
//     time to 200 and the jobs service's RSS while it is stored;
//  2. GET /job-results pages of that job: p50/p99 over random cursors (500 rows) and a status filter;
//  3. the whole report exported as CSV and XLSX: time, size, RSS of jobs and gateway while it streams;
//  4. while 5 users each start a 50,000-row job at once, the latency of another user's calls.
//   node scripts/bench/job-results.mjs [recipients=50000]
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { linkedUsers, mib, numbers, percentile, pool, rssKiB, sleep, startBench } from './jobs-lib.mjs';

const N = Number(process.argv[2] ?? 50_000);

/** CPU time of the Postgres serving `port`: the postmaster and its backends, ms. */
const pgCpuMs = (port) => {
  const stats = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        return [
          {
            pid: Number(pid),
            cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
            ppid: Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]),
          },
        ];
      } catch {
        return [];
      }
    });
  const master = stats.find((p) => p.cmd.includes('postgres') && p.cmd.includes(`-p\0${port}\0`));
  if (!master) return NaN;
  return [master, ...stats.filter((p) => p.ppid === master.pid)].reduce((sum, p) => {
    try {
      return sum + cpuMs(p.pid);
    } catch {
      return sum;
    }
  }, 0);
};

/** User + system CPU time of a process so far, ms (Linux /proc). */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

/** Samples RSS of the given pids every 25 ms while `fn` runs; returns its result and the peaks. */
async function withPeakRss(pids, fn) {
  const peaks = pids.map((p) => rssKiB(p));
  const timer = setInterval(() => pids.forEach((p, i) => (peaks[i] = Math.max(peaks[i], rssKiB(p)))), 25);
  try {
    return { result: await fn(), peaks };
  } finally {
    clearInterval(timer);
  }
}

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

// Sending is slowed right down: this measures storing and reading, not sending.
const bench = await startBench({
  SEND_DELAY_MS: '600000',
  JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: '1000000',
  LOG_LEVEL: process.env.JOBS_LOG_LEVEL ?? 'warn',
});
const gatewayPid = bench.sys.gateway.process.pid;
try {
  const [user, other, ...burst] = await linkedUsers(bench, 7, 'results');
  const post = (u, body) =>
    u.client.post('/start-bulk-messages', { clerkUserId: u.userId, ...body }, { 'Idempotency-Key': randomUUID() });
  await post(user, personalised(10, 50_000_000)); // warm-up (JIT, object store bucket, connections)
  await sleep(500);

  // 1. accept
  const body = personalised(N, 60_000_000);
  const bytes = Buffer.byteLength(JSON.stringify(body));
  const idle = rssKiB(bench.jobsPid);
  const cpu0 = [cpuMs(bench.jobsPid), cpuMs(gatewayPid), pgCpuMs(bench.sys.postgres.port)];
  const t0 = performance.now();
  const {
    result: started,
    peaks: [jobsPeak],
  } = await withPeakRss([bench.jobsPid], () => post(user, body));
  const acceptMs = performance.now() - t0;
  if (started.status !== 200) {
    for (const h of bench.sys.services) console.error(`--- ${h.label}\n${h.process.tail(15)}`);
    throw new Error(`start: ${started.status} ${JSON.stringify(started.body).slice(0, 300)}`);
  }
  const jobId = started.body.jobId;
  console.log(
    `1. ${N} personalised rows (4 variables each, body ${(bytes / 1048576).toFixed(1)} MiB): accepted in ${acceptMs.toFixed(0)} ms`,
  );
  console.log(`   jobs RSS: ${mib(idle)} MiB before, peak ${mib(jobsPeak)} MiB while storing`);
  // CPU time does not grow with the machine's load the way wall time does: the figure to compare.
  console.log(
    `   CPU used: jobs ${cpuMs(bench.jobsPid) - cpu0[0]} ms, gateway ${cpuMs(gatewayPid) - cpu0[1]} ms, Postgres ${pgCpuMs(bench.sys.postgres.port) - cpu0[2]} ms (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
  );
  const timings = bench.sys.services
    .find((h) => h.name === 'jobs')
    .process.tail(50)
    .split('\n')
    .filter((l) => l.includes('start timings'))
    .at(-1);
  if (timings)
    console.log(
      `   jobs: ${JSON.stringify(Object.fromEntries(['queuedMs', 'readMs', 'storeMs'].map((k) => [k, JSON.parse(timings)[k]])))}`,
    );
  if (!process.env.BENCH_ONLY_ACCEPT) await readAndBurst(user, other, burst, jobId, post);
} finally {
  await bench.stop();
}

async function readAndBurst(user, other, burst, jobId, post) {
  // 2. report pages
  const times = [];
  for (let i = 0; i < 200; i++) {
    const cursor = i === 0 ? '' : `&cursor=${Math.floor(Math.random() * (N - 500))}`;
    const s = performance.now();
    const res = await user.client.get(`/job-results/${jobId}?limit=500${cursor}`);
    times.push(performance.now() - s);
    if (res.status !== 200 || res.body.results.length !== 500) throw new Error(`page: ${res.status}`);
  }
  times.sort((a, b) => a - b);
  const filtered = [];
  for (let i = 0; i < 50; i++) {
    const s = performance.now();
    await user.client.get(
      `/job-results/${jobId}?status=pending&limit=100&cursor=${Math.floor(Math.random() * (N - 100))}`,
    );
    filtered.push(performance.now() - s);
  }
  filtered.sort((a, b) => a - b);
  console.log(
    `2. GET /job-results (500 rows, random cursor, 200 calls): p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms;` +
      ` status=pending (100 rows, 50 calls): p50 ${percentile(filtered, 50).toFixed(1)} ms, p99 ${percentile(filtered, 99).toFixed(1)} ms`,
  );

  // 3. export
  for (const format of ['csv', 'xlsx']) {
    const before = [rssKiB(bench.jobsPid), rssKiB(gatewayPid)];
    const cpuBefore = [cpuMs(bench.jobsPid), cpuMs(gatewayPid)];
    const s = performance.now();
    const { result: size, peaks } = await withPeakRss([bench.jobsPid, gatewayPid], async () => {
      const res = await fetch(`${bench.sys.gateway.url}/job-results/${jobId}/export?format=${format}`, {
        headers: { authorization: `Bearer ${user.token}` },
      });
      if (res.status !== 200) throw new Error(`export ${format}: ${res.status}`);
      let total = 0;
      for await (const chunk of res.body) total += chunk.byteLength;
      return total;
    });
    const ms = performance.now() - s;
    console.log(
      `3. export ${format}: ${N} rows, ${(size / 1048576).toFixed(1)} MiB in ${ms.toFixed(0)} ms; RSS jobs ${mib(before[0])} → peak ${mib(peaks[0])} MiB,` +
        ` gateway ${mib(before[1])} → peak ${mib(peaks[1])} MiB; CPU jobs ${cpuMs(bench.jobsPid) - cpuBefore[0]} ms, gateway ${cpuMs(gatewayPid) - cpuBefore[1]} ms`,
    );
  }

  // 4. a burst of big starts and another user's calls
  const otherTimes = [];
  let bursting = true;
  const probe = (async () => {
    while (bursting) {
      const s = performance.now();
      const res = await other.client.get(`/api/jobs/${encodeURIComponent(other.userId)}`);
      otherTimes.push(performance.now() - s);
      if (res.status !== 200) throw new Error(`other user's call answered ${res.status}`);
      await sleep(50);
    }
  })();
  const b0 = performance.now();
  const results = await pool(burst.length, burst.length, (i) =>
    post(burst[i], personalised(N, 70_000_000)).then((r) => [r.status, performance.now() - b0]),
  );
  bursting = false;
  await probe;
  otherTimes.sort((a, b) => a - b);
  console.log(
    `4. ${burst.length} users start ${N} rows each at once: answers ${results.map(([s, t]) => `${s} in ${(t / 1000).toFixed(1)} s`).join(', ')};` +
      ` meanwhile another user's GET /api/jobs: p50 ${percentile(otherTimes, 50).toFixed(0)} ms, p99 ${percentile(otherTimes, 99).toFixed(0)} ms, max ${otherTimes.at(-1).toFixed(0)} ms (${otherTimes.length} calls)`,
  );
}
