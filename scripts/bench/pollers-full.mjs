#!/usr/bin/env node
// Pollers asking for whole job-status answers: `pollers` signed-in users each poll their own running job
// (`BENCH_JOB_RECIPIENTS`, default 500, sent recipients, written straight into the jobs schema) once a
// second for `seconds` (after a cold start until each has its first 200, printed on its own line, and
// each phase after 3 s of polling that is not measured): first without If-None-Match (every poll a 200 with the job's lists from the
// jobs service), then with it (the ETag of the last 200, as browsers revalidate); each on a quiet machine
// and again with a CPU hog of 2 busy processes. Per run: answers by status (503s counted), p50/p99/max,
// the gateway's and jobs' CPU per request, the gateway's own event-loop delay and major garbage
// collections, and the load average. BENCH_PROFILE=gateway (or jobs) CPU-profiles that service over each
// measured phase (jobs-lib.mjs).
//   flock /tmp/bench.lock node scripts/bench/pollers-full.mjs [pollers=1000] [seconds=20]
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { mintJobId } from '@bns/service-kit';
import { sleep, startSystem } from '@bns/testing';
import { useNode24 } from '../runtime.mjs';
import { inspected, percentile, profileFromNow, signIn } from './jobs-lib.mjs';
import { cpuSeconds, scrapeMetrics } from './proc-lib.mjs';

await useNode24();

const POLLERS = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 20);
const RECIPIENTS = Number(process.env.BENCH_JOB_RECIPIENTS ?? 500);
/** Seconds each phase polls before it is measured. */
const LEAD_IN_S = 3;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

console.log(`${cpus().length} cores, load average ${load()}`);
const sys = await startSystem({
  services: ['jobs', 'sessions'],
  shards: 1,
  startTimeoutMs: 400_000,
  serviceEnv: {
    gateway: {
      RATE_LIMIT_BURST: '1000000',
      RATE_LIMIT_PER_SECOND: '100000',
      LOG_LEVEL: 'warn',
      ...inspected('gateway'),
    },
    jobs: inspected('jobs'),
  },
});
const hogs = [];
try {
  const sessions = [];
  for (let i = 0; i < POLLERS; i += 50)
    sessions.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, POLLERS - i) }, (_, k) => signIn(sys.gateway.url, `full${i + k}@bench.hk`)),
      )),
    );
  const db = new pg.Client({ connectionString: sys.postgres.url });
  await db.connect();
  const [{ key }] = (await db.query('SELECT key FROM jobs.job_id_scheme')).rows;
  const userIds = sessions.map((s) => s.userId);
  const jobIds = userIds.map((u) => mintJobId(key, u));
  await db.query(
    `INSERT INTO jobs.jobs (id, user_id, status, message, total, sent, delay_ms, estimated_minutes, started_at)
     SELECT j.id, j.user_id, 'running', 'Hello from the bench', $3::int, $3::int, 4000, 60, now() - interval '1 hour'
       FROM unnest($1::uuid[], $2::text[]) AS j(id, user_id)`,
    [jobIds, userIds, RECIPIENTS],
  );
  await db.query(
    `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, done_at)
     SELECT j.id, s, (60000000 + s)::text, 'sent', now() - make_interval(secs => $2::int - s)
       FROM unnest($1::uuid[]) AS j(id), generate_series(1, $2::int) AS s`,
    [jobIds, RECIPIENTS],
  );
  await db.query('ANALYZE jobs.jobs, jobs.job_recipients');
  await db.end();
  const pollers = sessions.map((s, i) => ({ token: s.token, jobId: jobIds[i], etag: undefined }));

  // The pollers' client: node:http on keep-alive connections, the body read to its end. It costs the
  // benchmark's one process far less CPU per poll than fetch, so its own event-loop delay (printed per
  // run) adds less to the times it measures; 1,000 browsers each poll from their own machine.
  const { hostname, port } = new URL(sys.gateway.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  // A kept-alive connection the gateway closed as idle (its keep-alive time-out, between phases) just as
  // a poll reused it is reset; the poll is sent again on a new one, as browsers do (and counted).
  let staleRetries = 0;
  const get = (path, headers, retried = false) =>
    new Promise((resolve, reject) => {
      const req = http.get({ hostname, port, path, headers, agent }, (res) => {
        res.on('end', () => resolve({ status: res.statusCode, etag: res.headers.etag }));
        res.on('error', reject);
        res.resume();
      });
      req.on('error', (err) => {
        if (retried || !req.reusedSocket || err.code !== 'ECONNRESET') return reject(err);
        staleRetries++;
        get(path, headers, true).then(resolve, reject);
      });
    });
  const gatewayPid = sys.gateway.process.pid;
  const jobsPid = sys.services.find((s) => s.name === 'jobs').process.pid;
  const poll = async (p, revalidate, times, statuses, refusedAt, startedAt) => {
    const t = performance.now();
    try {
      const res = await get(`/job-status/${p.jobId}`, {
        authorization: `Bearer ${p.token}`,
        ...(revalidate && p.etag ? { 'if-none-match': p.etag } : {}),
      });
      if (res.status === 200) p.etag = res.etag ?? p.etag;
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 503) refusedAt?.push(t);
    } catch (err) {
      const key = `error ${err?.code ?? err?.message ?? err}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    times.push(performance.now() - t);
    startedAt?.push(t);
  };
  /** The gateway's job-status answers so far, by where they came from (its /metrics counters). */
  const answeredBy = async () => {
    const gauge = await scrapeMetrics(sys.gateway.metricsUrl);
    const count = (name, by) => gauge(name, `answered_by="${by}"`) || 0;
    return {
      // prom-client resets its event-loop delay histogram on each scrape: read after a phase, these are the phase's.
      loop: { p99: gauge('nodejs_eventloop_lag_p99_seconds'), max: gauge('nodejs_eventloop_lag_max_seconds') },
      majorGc: {
        seconds: gauge('nodejs_gc_duration_seconds_sum', 'kind="major"'),
        count: gauge('nodejs_gc_duration_seconds_count', 'kind="major"'),
      },
      whole: {
        memory: count('bns_gateway_job_status_answers_total', 'memory'),
        jobs: count('bns_gateway_job_status_answers_total', 'jobs'),
      },
      unchanged: {
        memory: count('bns_gateway_job_status_revalidations_total', 'memory'),
        jobs: count('bns_gateway_job_status_revalidations_total', 'jobs'),
      },
    };
  };
  const run = async (label, revalidate) => {
    const times = [];
    const statuses = {};
    const refusedAt = [];
    const startedAt = [];
    const clientDelay = monitorEventLoopDelay({ resolution: 10 });
    // Each phase starts with LEAD_IN_S of polling that is not measured: the pause before it (a hog
    // spinning up) let connections and cache entries lapse, which pollers that never stop do not see.
    const begin = performance.now() + LEAD_IN_S * 1000;
    const end = begin + SECONDS * 1000;
    const unmeasured = { times: [], statuses: {} };
    const polling = Promise.all(
      pollers.map(async (p) => {
        await sleep(Math.random() * 1000);
        while (performance.now() < end) {
          const next = performance.now() + 1000;
          if (next - 1000 < begin) await poll(p, revalidate, unmeasured.times, unmeasured.statuses);
          else await poll(p, revalidate, times, statuses, refusedAt, startedAt);
          await sleep(Math.max(0, next - performance.now()));
        }
      }),
    );
    await sleep(Math.max(0, begin - performance.now()));
    const by0 = await answeredBy();
    clientDelay.enable();
    const load0 = load();
    const cpu0 = [cpuSeconds(gatewayPid).own, cpuSeconds(jobsPid).own];
    const client0 = process.cpuUsage();
    const retries0 = staleRetries;
    const stopProfile = await profileFromNow();
    await polling;
    await stopProfile();
    clientDelay.disable();
    const n = times.length;
    // The slowest 1%: in which seconds of the run they were sent.
    const cut = [...times].sort((a, b) => a - b)[Math.floor(times.length * 0.99)];
    const slowBySecond = new Map();
    times.forEach((ms, i) => {
      if (ms < cut) return;
      const sec = Math.floor((startedAt[i] - begin) / 1000);
      slowBySecond.set(sec, (slowBySecond.get(sec) ?? 0) + 1);
    });
    const cpu = [cpuSeconds(gatewayPid).own - cpu0[0], cpuSeconds(jobsPid).own - cpu0[1]];
    const client = process.cpuUsage(client0);
    times.sort((a, b) => a - b);
    const line =
      `pollers-full ${label}: ${POLLERS} pollers at 1 Hz × ${SECONDS} s, ${n} polls (${(n / SECONDS).toFixed(0)}/s): ` +
      `${Object.entries(statuses)
        .map(([s, c]) => `${c} × ${s}`)
        .join(', ')}` +
      ` (503: ${(((statuses[503] ?? 0) / n) * 100).toFixed(1)}%); p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${times.at(-1).toFixed(0)} ms; ` +
      `CPU per poll: gateway ${((cpu[0] * 1000) / n).toFixed(2)} ms, jobs ${((cpu[1] * 1000) / n).toFixed(2)} ms, ` +
      `the benchmark's client ${((client.user + client.system) / 1000 / n).toFixed(2)} ms; load ${load0} → ${load()}`;
    const by1 = await answeredBy();
    const since = (k) =>
      `${by1[k].memory - by0[k].memory} from the gateway's memory, ${by1[k].jobs - by0[k].jobs} by jobs`;
    console.log(
      `${line}\n  the slowest 1% by second of the run: ${[...slowBySecond]
        .sort((a, b) => a[0] - b[0])
        .map(([sec, c]) => `${sec}s ${c}`)
        .join(
          ', ',
        )}; the benchmark's own event-loop delay p99 ${(clientDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(clientDelay.max / 1e6).toFixed(1)} ms`,
    );
    console.log(
      `  whole answers (200): ${since('whole')}; revalidations: ${since('unchanged')}; ` +
        `polls sent again after a stale kept-alive connection was reset: ${staleRetries - retries0}`,
    );
    const gcs = by1.majorGc.count - by0.majorGc.count;
    console.log(
      `  the gateway's own event-loop delay p99 ${(by1.loop.p99 * 1000).toFixed(1)} ms, max ${(by1.loop.max * 1000).toFixed(1)} ms; ` +
        `its major garbage collections ${gcs}, ${((by1.majorGc.seconds - by0.majorGc.seconds) * 1000).toFixed(0)} ms in all`,
    );
    if (refusedAt.length > 0) {
      // When the 503s came: per second of the run, the seconds with any.
      const perSecond = new Map();
      for (const t of refusedAt) {
        const s = Math.floor((t - begin) / 1000);
        perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
      }
      console.log(`  503s by second of the run: ${[...perSecond].map(([s, c]) => `${s}s ${c}`).join(', ')}`);
    }
    return line;
  };
  const lines = [];
  // Warm-up, and the cold start users live after a deploy: every poller's first poll within a second,
  // asked again a second later (as the web app does) until each had its 200 (its first ETag).
  {
    const times = [];
    const statuses = {};
    const t0 = performance.now();
    await Promise.all(
      pollers.map(async (p) => {
        await sleep(Math.random() * 1000);
        for (const seen = {}; ;) {
          await poll(p, false, times, seen);
          for (const [k, c] of Object.entries(seen)) statuses[k] = (statuses[k] ?? 0) + c;
          if (seen[200]) return;
          delete seen[503];
          for (const k of Object.keys(seen)) if (k.startsWith('error')) delete seen[k];
          await sleep(1000);
        }
      }),
    );
    times.sort((a, b) => a - b);
    console.log(
      `pollers-full cold start (every poller's first full answer, no warm cache; not a steady-state figure): all answered in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
        `${Object.entries(statuses)
          .map(([st, c]) => `${c} × ${st}`)
          .join(', ')}; p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`,
    );
  }
  await sleep(1000);
  lines.push(await run(`full answers (no If-None-Match, ${RECIPIENTS} sent entries), quiet`, false));
  lines.push(await run('with If-None-Match, quiet', true));
  // The CPU hog: 2 processes spinning, as other tenants of the machine would.
  for (let i = 0; i < 2; i++) hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  await sleep(2000);
  lines.push(await run('full answers, CPU hog of 2 busy processes', false));
  lines.push(await run('with If-None-Match, CPU hog of 2 busy processes', true));
  console.log(`\n${lines.join('\n')}`);
} finally {
  for (const h of hogs) h.kill('SIGKILL');
  await sys.stop();
}
