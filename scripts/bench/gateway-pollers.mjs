#!/usr/bin/env node
// The gateway's hot path: N signed-in users each polling GET /job-status/{jobId} once a second (the
// spec's first polling step), an overload burst, then a closed loop of C clients to find saturation,
// and the same closed loop against a bare Nest app (one GET route, a small JSON answer, the same
// Nest/Express from node_modules, started here as a child process) for a yardstick measured in the
// same run on the same machine. Printed: p50/p99 latency, requests answered, the gateway's CPU per
// request (from /proc/<pid>/stat over the measured window), and the CPU of every other process
// (Postgres: the postmaster and its backends) so you can see where the time goes.
// The job id is a random UUID, which names no job of the user: the gateway answers it 404 from the id
// alone (auth, rate limit, the id's check: JobIdCheck), as it would any mistyped or made-up id. (An id
// the gateway cannot check, e.g. a job made before ids carried their owner's MAC, costs a full trip: a
// NATS request to jobs, its database lookup, a 404 back; bare Nest + NATS below measures that trip.)
// Then the same 1 Hz and saturation runs revalidating, as browsers poll: each user has a running job
// of BENCH_JOB_RECIPIENTS (default 500) sent recipients, written straight into the jobs schema (no
// sending, so it stays unchanged), and sends back the ETag of its last 200 in If-None-Match; the
// lines say how many answers were 304, how many of those the gateway answered from its memory
// (JobStatusCache; JOB_STATUS_CACHE_MS=0 in the environment turns it off to compare) and what each
// side's CPU per request was. Then a saturation run of full answers: the same users' polls without
// If-None-Match, each a 200 with its lists from the jobs service (the heaviest poll there is).
// The client is undici's Pool.request (one connection per user in flight, like a browser's keep-alive
// connection), cheaper than fetch, so the machine's two cores go to the servers; both sides get the same client.
// The bare Nest app does no NATS round trip, so it measures Nest/Express alone, not what a gateway
// must do per poll: the gateway's figure there also pays for the jobs service, NATS and Postgres on the
// same two cores. A second yardstick, bare Nest + NATS, is the same kind of app whose route makes the
// same request to jobs (service-kit's RpcClient, `jobs.status` for an unknown job, a 404 out of Nest's
// own exception handling) and nothing else (no auth, rate limit, shedding, headers, logging): the
// gateway / bare Nest + NATS ratio is what the gateway's own work costs. Both ratios are printed.
// The bare Nest app runs right after each gateway saturation run (the 404s, the revalidations) and at
// the end (after the full answers), and each ratio is against the run right after it: this machine's
// speed moves by up to 2× within minutes, so a yardstick measured minutes away mostly measures that.
// The ratios against the bare Nest run at the end are printed too.
// For the gateway's phases it also prints the gateway's NATS round trips for job-status and the jobs service's own time
// answering them (both from their /metrics histograms): whether a slow answer waited in jobs or on the way.
// Build first. GATEWAY_PROFILE=1 also CPU-profiles the gateway during the saturation run (through its
// inspector; GATEWAY_PROFILE=revalidating during the revalidating one instead, =1hz during the 1 Hz one, =full during the full answers), prints where its time goes, by package and by function, and writes the profile to
// $TMPDIR/gateway-pollers.cpuprofile (open it in Chrome DevTools); BENCH_PROFILE_SERVICE=jobs profiles the jobs service instead. The overload phase runs twice: as
// the clients come (opening ~1,000 connections at once), then on connections opened beforehand.
// BENCH_OVERLOAD_RUNS=N repeats that pair N times; BENCH_ONLY=overload stops after it (to compare the refusals' tail over several runs).
// BENCH_SHED_MAX_IN_FLIGHT, BENCH_SHED_READS_MAX_IN_FLIGHT and BENCH_SHED_TARGET_MS set the gateway's in-flight bound, the
// ceiling of the adaptive limit reads meet and its target (0: a fixed one).
//   node scripts/bench/gateway-pollers.mjs [pollers=1000] [seconds=20] [saturationClients=64]
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { mintJobId } from '@bns/service-kit';
import { profileProcess } from './profile-lib.mjs';

const BARE_PORT = process.env.BENCH_BARE_NEST_PORT;
if (BARE_PORT) {
  await serveBareNest(Number(BARE_PORT), process.env.BENCH_BARE_NATS_URL);
} else {
  await main();
}

function answeredSince(before, after) {
  const memory = after.memory - before.memory;
  const jobs = after.jobs - before.jobs;
  return `from the gateway's memory: ${memory}, by the jobs service: ${jobs} (${((100 * memory) / Math.max(1, memory + jobs)).toFixed(1)}% from memory)`;
}

/**
 * The yardstick: Nest's defaults (Express adapter, body parsers), one GET route answering a small JSON.
 * With `natsUrl`, the route asks the jobs service for the job instead (one `jobs.status` request through
 * service-kit's RpcClient, as the gateway does) and answers its reply, an error as Nest's own 404/503.
 */
async function serveBareNest(port, natsUrl) {
  const { Controller, Get, HttpException, Module, Param } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  let status = (jobId) => ({
    success: true,
    job: { id: jobId, status: 'running', progress: { total: 10, sent: 3, failed: 0 } },
  });
  if (natsUrl) {
    const { connect } = await import('@nats-io/transport-node');
    const { RpcClient } = await import('@bns/service-kit');
    const rpc = new RpcClient(await connect({ servers: natsUrl, noAsyncTraces: true }), { shards: 1, timeoutMs: 5000 });
    status = async (jobId) => {
      try {
        const { job } = await rpc.call('jobs.status', { userId: 'user_bare_nest', jobId });
        return { success: true, job };
      } catch (err) {
        throw new HttpException(
          { success: false, error: err.message, code: err.code },
          err.kind === 'not_found' ? 404 : 503,
        );
      }
    };
  }
  class BareController {
    status(jobId) {
      return status(jobId);
    }
  }
  Controller()(BareController);
  Get('job-status/:jobId')(
    BareController.prototype,
    'status',
    Object.getOwnPropertyDescriptor(BareController.prototype, 'status'),
  );
  Param('jobId')(BareController.prototype, 'status', 0);
  class BareModule {}
  Module({ controllers: [BareController] })(BareModule);
  const app = await NestFactory.create(BareModule, { logger: false });
  await app.listen(port, '127.0.0.1');
  process.stdout.write('listening\n');
}

async function main() {
  const { devSignIn, freePort, ManagedProcess, revalidationsAnswered, sleep, startSystem, waitFor } =
    await import('@bns/testing');
  const POLLERS = Number(process.argv[2] ?? 1000);
  const SECONDS = Number(process.argv[3] ?? 20);
  const SATURATION_CLIENTS = Number(process.argv[4] ?? 64);
  const SATURATION_S = 10;
  const OVERLOAD_S = 5;
  const TICK_S = 100; // USER_HZ on Linux
  // GATEWAY_PROFILE=1 profiles the saturation run on the 404 path, =revalidating the revalidating one.
  const PROFILE = process.env.GATEWAY_PROFILE === '1';
  const PROFILE_REVALIDATING = process.env.GATEWAY_PROFILE === 'revalidating';
  // =1hz: the 1 Hz run on the 404 path (what each request costs when requests come one at a time).
  const PROFILE_1HZ = process.env.GATEWAY_PROFILE === '1hz';
  const PROFILE_FULL = process.env.GATEWAY_PROFILE === 'full';
  const PROFILE_PORT = 9339;
  // BENCH_PROFILE_SERVICE=jobs: the same runs profile the jobs service instead of the gateway.
  const PROFILED = process.env.BENCH_PROFILE_SERVICE ?? 'gateway';
  if (PROFILED !== 'gateway' && PROFILED !== 'jobs') throw new Error('BENCH_PROFILE_SERVICE: gateway or jobs');
  const inspected = (name) =>
    (PROFILE || PROFILE_REVALIDATING || PROFILE_1HZ || PROFILE_FULL) && PROFILED === name
      ? { NODE_OPTIONS: `--inspect=127.0.0.1:${PROFILE_PORT}` }
      : {};
  // The gateway's own defaults unless BENCH_SHED_MAX_IN_FLIGHT, BENCH_SHED_READS_MAX_IN_FLIGHT or BENCH_SHED_TARGET_MS (0 = a fixed bound) say otherwise.
  const SHED_MAX_IN_FLIGHT = process.env.BENCH_SHED_MAX_IN_FLIGHT;
  const SHED_READS_MAX_IN_FLIGHT = process.env.BENCH_SHED_READS_MAX_IN_FLIGHT;
  const SHED_TARGET_MS = process.env.BENCH_SHED_TARGET_MS;
  const SHEDDING = `reads shed past ${SHED_READS_MAX_IN_FLIGHT ?? 'the default'} in flight at most, ${SHED_TARGET_MS === '0' ? 'a fixed bound' : `adaptive, target ${SHED_TARGET_MS ?? 'the default'} ms`}`;
  const JOB_RECIPIENTS = Number(process.env.BENCH_JOB_RECIPIENTS ?? 500);
  const OVERLOAD_RUNS = Math.max(1, Number(process.env.BENCH_OVERLOAD_RUNS ?? 1));
  const ONLY = process.env.BENCH_ONLY;
  if (ONLY !== undefined && ONLY !== 'overload') throw new Error('BENCH_ONLY: overload (or unset for every phase)');

  const cpuTicks = (pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime + stime
    } catch {
      return 0; // exited
    }
  };
  /** The postmaster and its backends (children), found by the port on its command line. */
  const postgresPids = (port) => {
    const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    const postmaster = all.find((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0].endsWith('/postgres') && argv[argv.indexOf('-p') + 1] === String(port);
      } catch {
        return false;
      }
    });
    if (!postmaster) return [];
    return [
      postmaster,
      ...all.filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1] === postmaster;
        } catch {
          return false;
        }
      }),
    ];
  };
  const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');

  /** A bare Nest app in a child process (see serveBareNest); with `natsUrl`, its route asks jobs. */
  const startBare = async (label, natsUrl) => {
    const port = await freePort();
    const proc = ManagedProcess.spawn(
      label,
      process.execPath,
      ['--enable-source-maps', fileURLToPath(import.meta.url)],
      {
        env: {
          ...process.env,
          BENCH_BARE_NEST_PORT: String(port),
          ...(natsUrl ? { BENCH_BARE_NATS_URL: natsUrl } : {}),
        },
      },
    );
    await waitFor(
      async () => proc.lines.includes('listening') || (proc.running ? false : Promise.reject(new Error(proc.tail()))),
      30_000,
      50,
      `the ${label} app`,
    );
    return { proc, url: `http://127.0.0.1:${port}` };
  };
  const bareProc = await startBare('bare nest');

  const sys = await startSystem({
    services: ['jobs', 'sessions', 'templates'],
    shards: 1,
    serviceEnv: {
      gateway: {
        RATE_LIMIT_BURST: '1000000',
        RATE_LIMIT_PER_SECOND: '100000',
        LOG_LEVEL: 'info',
        ...(SHED_MAX_IN_FLIGHT !== undefined ? { SHED_MAX_IN_FLIGHT } : {}),
        ...(SHED_READS_MAX_IN_FLIGHT !== undefined ? { SHED_READS_MAX_IN_FLIGHT } : {}),
        ...(SHED_TARGET_MS !== undefined ? { SHED_TARGET_MS } : {}),
        // JOB_STATUS_CACHE_MS=0 in the bench's environment: every revalidation asks the jobs service (to compare).
        ...(process.env.JOB_STATUS_CACHE_MS !== undefined
          ? { JOB_STATUS_CACHE_MS: process.env.JOB_STATUS_CACHE_MS }
          : {}),
        ...inspected('gateway'),
      },
      jobs: inspected('jobs'),
    },
  });
  const bareNatsProc = await startBare('bare nest+nats', sys.nats.url).catch(async (err) => {
    await Promise.all([sys.stop(), bareProc.proc.stop()]);
    throw err;
  });
  const pgPids = postgresPids(new URL(sys.postgres.url).port);
  const procs = [
    ...sys.services.map((s) => ({ label: s.label, pids: [s.process.pid] })),
    { label: 'postgres', pids: pgPids },
    { label: 'nats', pids: [sys.nats.process.pid] },
    { label: 'bench client', pids: [process.pid] },
    { label: 'bare nest', pids: [bareProc.proc.pid] },
    { label: 'bare nest+nats', pids: [bareNatsProc.proc.pid] },
  ];
  const ticksOf = (p) => p.pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const pools = new Map();
  /**
   * When each numbered request's headers were handed to its socket (undici's sendHeaders diagnostics
   * channel, just before the write), by its SEQ_HEADER: the time between a call and that moment was
   * spent in this process, not in the gateway.
   */
  const SEQ_HEADER = 'x-bench-seq';
  const SEQ_MARK = `${SEQ_HEADER}: `;
  const writtenAt = new Map();
  let benchSeq = 0;
  diagnosticsChannel.subscribe('undici:client:sendHeaders', ({ headers }) => {
    const at = headers.indexOf(SEQ_MARK);
    if (at === -1) return;
    writtenAt.set(Number(headers.slice(at + SEQ_MARK.length, headers.indexOf('\r\n', at))), performance.now());
  });
  /** When each connection to the gateway was established (`performance.now()`): a late one delays its requests. */
  const connectedAt = [];
  const poolFor = (origin) => {
    let pool = pools.get(origin);
    if (!pool) {
      pools.set(origin, (pool = new Pool(origin, { connections: null, pipelining: 1, keepAliveTimeout: 60_000 })));
      if (origin === url) pool.on('connect', () => connectedAt.push(performance.now()));
    }
    return pool;
  };

  /**
   * The gateway's own event-loop delay (prom-client's, which starts afresh at each scrape) and its GC
   * time so far, from its /metrics: where a latency the gateway did not spend handling a request went.
   */
  const gatewayLoop = async () => {
    const text = await (await fetch(`${sys.gateway.metricsUrl}/metrics`)).text();
    const { value, gcByKind } = readMetrics(text);
    const gcS = sum(gcByKind);
    // The gateway's own view of each request (bns_http_request_duration_seconds: from its first
    // middleware to the answer's end), cumulative counts per status and bucket, summed over routes.
    const handled = histogramBuckets(
      text,
      'bns_http_request_duration_seconds',
      (labels) => /status="(\d+)"/.exec(labels)?.[1],
    );
    // Its NATS round trips for job-status (bns_rpc_client_duration_seconds) and how long the jobs service
    // took to answer them (bns_rpc_server_duration_seconds, from the jobs service's /metrics): whether a
    // slow answer waited on the way to jobs and back, or in jobs.
    const jobsStatus = (labels) => (labels.includes('subject="jobs.status"') ? 'jobs.status' : undefined);
    const roundTrips = histogramBuckets(text, 'bns_rpc_client_duration_seconds', jobsStatus);
    const jobsText = await (await fetch(`${jobsMetricsUrl}/metrics`)).text();
    const answered = histogramBuckets(jobsText, 'bns_rpc_server_duration_seconds', jobsStatus);
    const jobs = readMetrics(jobsText);
    return {
      p50: value('nodejs_eventloop_lag_p50_seconds'),
      p99: value('nodejs_eventloop_lag_p99_seconds'),
      max: value('nodejs_eventloop_lag_max_seconds'),
      gcS,
      handled,
      roundTrips,
      answered,
      jobs: {
        p99: jobs.value('nodejs_eventloop_lag_p99_seconds'),
        max: jobs.value('nodejs_eventloop_lag_max_seconds'),
        gcS: sum(jobs.gcByKind),
        gcByKind: jobs.gcByKind,
      },
    };
  };

  /**
   * A process's /metrics text: `value(name)`, one sample of a metric (its first series), and its GC
   * seconds so far by kind (major, minor, incremental, weakcb: a long pause is a major one).
   */
  function readMetrics(text) {
    const value = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const gcLines = text.split('\n').filter((l) => l.startsWith('nodejs_gc_duration_seconds_sum'));
    const gcByKind = Object.fromEntries(
      gcLines.map((l) => [/kind="([^"]+)"/.exec(l)?.[1] ?? '?', Number(l.split(' ').at(-1))]),
    );
    return { value, gcByKind };
  }
  const sum = (byKind) => Object.values(byKind).reduce((a, b) => a + b, 0);

  /** A Prometheus histogram's cumulative bucket counts, summed per group (`groupOf` its labels; undefined: skipped). */
  function histogramBuckets(text, metric, groupOf) {
    const groups = new Map();
    for (const m of text.matchAll(new RegExp(`^${metric}_bucket\\{([^}]*)\\} ([0-9.e+-]+)$`, 'gm'))) {
      const group = groupOf(m[1]);
      const le = /le="([^"]+)"/.exec(m[1])?.[1];
      if (!group || !le) continue;
      const buckets = groups.get(group) ?? new Map();
      buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
      groups.set(group, buckets);
    }
    return groups;
  }

  /**
   * Per status, how long the gateway itself took (its histogram's buckets, between two scrapes): the
   * bucket bound that 50% and 99% of the phase's requests were within. Set against the client's
   * latency, it says whether a slow answer waited in the gateway or before it (connection, kernel,
   * client).
   */
  const handledSince = (before, after, field = 'handled') =>
    [...after[field]]
      .map(([status, buckets]) => {
        const les = [...buckets.keys()].sort((a, b) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b)));
        const count = (le) => buckets.get(le) - (before[field].get(status)?.get(le) ?? 0);
        const total = count('+Inf');
        if (!(total > 0)) return undefined;
        const within = (share) => les.find((le) => count(le) >= share * total);
        const ms = (le) => (le === '+Inf' ? 'more' : `${Number(le) * 1000} ms`);
        return `${status}: 50% within ${ms(within(0.5))}, 99% within ${ms(within(0.99))}`;
      })
      .filter(Boolean)
      .join('; ');

  /**
   * The machine's TCP counters that explain a connection waiting a second (its SYN retried):
   * TcpExt in /proc/net/netstat, as `nstat` shows them. ListenOverflows / ListenDrops: the accept queue
   * was full; TCPReqQFullDrop / TCPReqQFullDoCookies: the SYN queue was; TCPSynRetrans: SYNs sent
   * again (by this machine's clients, the benchmark's among them).
   */
  const TCP_COUNTERS = ['ListenOverflows', 'ListenDrops', 'TCPReqQFullDrop', 'TCPReqQFullDoCookies', 'TCPSynRetrans'];
  const tcpCounters = () => {
    try {
      const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('TcpExt:'))
        .map((l) => l.split(/\s+/));
      return Object.fromEntries(TCP_COUNTERS.map((c) => [c, Number(values[names.indexOf(c)])]));
    } catch {
      return {};
    }
  };

  async function measure(name, server, run) {
    const tcpBefore = tcpCounters();
    const gatewayBefore = server === 'gateway' ? await gatewayLoop() : undefined;
    // Connections the client holds to the gateway: a phase that needs more opens them all at once.
    const connectedBefore = server === 'gateway' ? (pools.get(url)?.stats.connected ?? 0) : undefined;
    const before = procs.map(ticksOf);
    // The client's own event-loop delay: a latency is measured by this process, so a busy client adds to it.
    const clientLag = monitorEventLoopDelay({ resolution: 10 });
    clientLag.enable();
    const t0 = performance.now();
    const result = await run();
    const wallS = (performance.now() - t0) / 1000;
    clientLag.disable();
    const used = procs.map((p, i) => ({ label: p.label, cpuS: (ticksOf(p) - before[i]) / TICK_S }));
    const serverCpu = used.find((u) => u.label === server).cpuS;
    const jobsCpu = server === 'bare nest' ? undefined : used.find((u) => u.label === 'jobs').cpuS;
    const times = result.times.sort((a, b) => a - b);
    const statuses = Object.entries(result.statuses)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    console.log(
      `${name}: ${times.length} requests in ${wallS.toFixed(1)} s (${(times.length / wallS).toFixed(0)} req/s; ${statuses}); ` +
        `p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, max ${times.at(-1)?.toFixed(0)} ms; ` +
        `${server} CPU ${((serverCpu * 1000) / Math.max(1, times.length)).toFixed(3)} ms/request` +
        (jobsCpu === undefined
          ? ''
          : `, jobs CPU ${((jobsCpu * 1000) / Math.max(1, times.length)).toFixed(3)} ms/request`),
    );
    for (const [status, answers] of Object.entries(result.byStatus ?? {})) {
      answers.sort((a, b) => a[0] - b[0]);
      const list = answers.map(([ms]) => ms);
      // When the slowest 1% were sent (seconds into the phase): a wave at the start, or all along.
      const slowest = answers
        .slice(Math.floor(0.99 * answers.length))
        .map(([, at]) => (at - t0) / 1000)
        .sort((a, b) => a - b);
      // How long each request waited in this process before its first byte was written (the client
      // setting up a connection and dispatching a burst), for all and for the slowest 1%.
      const held = (rows) =>
        rows
          .map(([, , w]) => w)
          .filter((w) => !Number.isNaN(w))
          .sort((a, b) => a - b);
      const heldAll = held(answers);
      const heldSlowest = held(answers.slice(Math.floor(0.99 * answers.length)));
      console.log(
        `  ${status}: ${list.length}, p50 ${pct(list, 50).toFixed(1)} ms, p99 ${pct(list, 99).toFixed(1)} ms, max ${list.at(-1).toFixed(0)} ms; ` +
          `the slowest 1% sent ${slowest[0].toFixed(2)}–${slowest.at(-1).toFixed(2)} s into the phase (median ${pct(slowest, 50).toFixed(2)} s)` +
          (heldAll.length > 0
            ? `; held in the client before its first byte left: p50 ${pct(heldAll, 50).toFixed(1)} ms, p99 ${pct(heldAll, 99).toFixed(1)} ms, the slowest 1%'s median ${pct(heldSlowest, 50).toFixed(1)} ms`
            : ''),
      );
    }
    const tcpAfter = tcpCounters();
    const tcp = TCP_COUNTERS.map((c) => [c, tcpAfter[c] - tcpBefore[c]]).filter(([, n]) => n > 0);
    if (tcp.length > 0)
      console.log(
        `  TCP on this machine (a SYN dropped or retried costs its connection a second): ${tcp.map(([c, n]) => `${c} ${n}`).join(', ')}`,
      );
    console.log(
      `  CPU seconds: ${used
        .filter((u) => u.cpuS > 0 || u.label === server)
        .map((u) => `${u.label} ${u.cpuS.toFixed(1)}`)
        .join(', ')}; load average ${load()}`,
    );
    // Each sample is a 10 ms timer's actual period: what is past 10 ms is delay.
    const lagMs = (ns) => Math.max(0, ns / 1e6 - 10).toFixed(1);
    console.log(
      `  bench client event-loop delay (part of every latency above): p50 ${lagMs(clientLag.percentile(50))} ms, p99 ${lagMs(clientLag.percentile(99))} ms, max ${lagMs(clientLag.max)} ms`,
    );
    if (gatewayBefore) {
      const opened = connectedAt.filter((at) => at >= t0).map((at) => (at - t0) / 1000);
      if (opened.length > 0) {
        console.log(
          `  new connections to the gateway: ${opened.length}, established ${pct(opened, 50).toFixed(2)} s (median), ${pct(opened, 99).toFixed(2)} s (p99), ${opened.at(-1).toFixed(2)} s (last) into the phase`,
        );
      }
      const after = await gatewayLoop();
      console.log(
        `  gateway event-loop delay: p50 ${lagMs(after.p50 * 1e9)} ms, p99 ${lagMs(after.p99 * 1e9)} ms, max ${lagMs(after.max * 1e9)} ms; ` +
          `gateway GC ${((after.gcS - gatewayBefore.gcS) * 1000).toFixed(0)} ms in ${wallS.toFixed(1)} s; ` +
          `client connections to the gateway ${connectedBefore} before, ${pools.get(url)?.stats.connected ?? 0} after`,
      );
      console.log(
        `  time spent in the gateway (its request histogram, by status): ${handledSince(gatewayBefore, after)}`,
      );
      const roundTrips = handledSince(gatewayBefore, after, 'roundTrips');
      if (roundTrips)
        console.log(
          `  the gateway's NATS round trips: ${roundTrips}; the jobs service answering them: ${handledSince(gatewayBefore, after, 'answered') || 'none'}`,
        );
      console.log(
        `  jobs event-loop delay: p99 ${lagMs(after.jobs.p99 * 1e9)} ms, max ${lagMs(after.jobs.max * 1e9)} ms; jobs GC ${((after.jobs.gcS - gatewayBefore.jobs.gcS) * 1000).toFixed(0)} ms in ${wallS.toFixed(1)} s (` +
          Object.entries(after.jobs.gcByKind)
            .map(([kind, sec]) => `${kind} ${((sec - (gatewayBefore.jobs.gcByKind[kind] ?? 0)) * 1000).toFixed(0)}`)
            .join(', ') +
          ' ms)',
      );
    }
    return { reqPerS: times.length / wallS, cpuMsPerRequest: (serverCpu * 1000) / Math.max(1, times.length) };
  }

  /**
   * One GET; answers its status. `times` gets the latency. A client with a `jobId` asks for its job
   * as a browser does, with the ETag of its last 200 in If-None-Match; one without asks for an unknown job.
   */
  async function poll(origin, client, times, statuses, byStatus) {
    const t = performance.now();
    // Numbered for the sendHeaders watcher only when the phase keeps answers by status.
    const seq = byStatus ? ++benchSeq : 0;
    const { statusCode, headers, body } = await poolFor(origin).request({
      path: `/job-status/${client.jobId ?? randomUUID()}`,
      method: 'GET',
      headers: {
        authorization: `Bearer ${client.token}`,
        ...(client.etag ? { 'if-none-match': client.etag } : {}),
        ...(seq ? { [SEQ_HEADER]: String(seq) } : {}),
      },
    });
    await body.dump();
    if (client.jobId && statusCode === 200 && !client.full) client.etag = headers.etag;
    const ms = performance.now() - t;
    times.push(ms);
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    const written = writtenAt.get(seq);
    writtenAt.delete(seq);
    if (byStatus) (byStatus[statusCode] ??= []).push([ms, t, written === undefined ? NaN : written - t]);
    return { statusCode, retryAfterS: Number(headers['retry-after'] ?? 0) };
  }
  const failed = (statuses) => () => void (statuses.error = (statuses.error ?? 0) + 1);

  /** Has `origin`'s pool hold at least `n` open connections (n health probes at once, each needing its own). */
  async function openConnections(origin, n) {
    const pool = poolFor(origin);
    for (let tries = 0; tries < 5 && pool.stats.connected < n; tries++) {
      await Promise.all(
        Array.from({ length: n }, () => pool.request({ path: '/healthz', method: 'GET' }).then((r) => r.body.dump())),
      );
    }
  }

  /**
   * C clients back to back for `seconds`. A 503/429 waits out its Retry-After plus up to a second of
   * jitter, as a well-behaved client does: without it every refused client of a burst comes back in
   * the same millisecond, and the refusals' latency measures that synchronised wave, not the gateway.
   */
  const closedLoop = (origin, users, clients, seconds, byStatus) => async () => {
    const times = [];
    const statuses = {};
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async (_, i) => {
        while (performance.now() < end) {
          const answer = await poll(origin, users[i % users.length], times, statuses, byStatus).catch(failed(statuses));
          if (answer?.retryAfterS) await sleep(answer.retryAfterS * 1000 + Math.random() * 1000);
        }
      }),
    );
    return { times, statuses, byStatus };
  };

  /** Every client once a second for SECONDS, each starting at a random point of the first second. */
  const oneHertz = (clients, byStatus) => async () => {
    const times = [];
    const statuses = {};
    const end = performance.now() + SECONDS * 1000;
    await Promise.all(
      clients.map(async (client) => {
        await sleep(Math.random() * 1000);
        while (performance.now() < end) {
          const next = performance.now() + 1000;
          await poll(url, client, times, statuses, byStatus).catch(failed(statuses));
          await sleep(Math.max(0, next - performance.now()));
        }
      }),
    );
    return { times, statuses, byStatus };
  };
  /**
   * Every client once, spread over a second (connections opened, caches filled, JIT warm); a client
   * with a job until it has its ETag (the first answers are whole jobs: some are shed, and come back
   * after their Retry-After).
   */
  const warmUp = (clients) =>
    Promise.all(
      clients.map(async (client) => {
        await sleep(Math.random() * 1000);
        for (let tries = 0; tries < 10; tries++) {
          const answer = await poll(url, client, [], {}).catch(() => undefined);
          if (!client.jobId || client.etag) return;
          await sleep((answer?.retryAfterS ?? 1) * 1000 + Math.random() * 1000);
        }
      }),
    );

  /** A running job per user, its recipients all sent: what a poller of a job in progress reads. */
  async function seedJobs(userIds) {
    const db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    try {
      // Job ids as the jobs service makes them (service-kit JobIdScheme): the gateway checks them.
      const [{ key }] = (await db.query('SELECT key FROM jobs.job_id_scheme')).rows;
      const jobIds = userIds.map((userId) => mintJobId(key, userId));
      await db.query(
        `INSERT INTO jobs.jobs (id, user_id, status, message, total, sent, delay_ms, estimated_minutes, started_at)
         SELECT j.id, j.user_id, 'running', 'Hello from the bench', $3::int, $3::int, 4000, 60, now() - interval '1 hour'
           FROM unnest($1::uuid[], $2::text[]) AS j(id, user_id)`,
        [jobIds, userIds, JOB_RECIPIENTS],
      );
      await db.query(
        `INSERT INTO jobs.job_recipients (job_id, seq, phone, state, done_at)
         SELECT j.id, s, (60000000 + s)::text, 'sent', now() - make_interval(secs => $2::int - s)
           FROM unnest($1::uuid[]) AS j(id), generate_series(1, $2::int) AS s`,
        [jobIds, JOB_RECIPIENTS],
      );
      await db.query('ANALYZE jobs.jobs, jobs.job_recipients');
      return jobIds;
    } finally {
      await db.end();
    }
  }

  /** Starts the V8 profiler in the gateway through its inspector; the returned function stops it and prints a summary. */

  const url = sys.gateway.url;
  const jobsMetricsUrl = sys.services.find((s) => s.name === 'jobs').metricsUrl;
  try {
    console.log(`${cpus().length} cores, load average ${load()}; ${POLLERS} pollers at 1 Hz for ${SECONDS} s`);
    const sessions = [];
    for (let i = 0; i < POLLERS; i += 50) {
      sessions.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, POLLERS - i) }, (_, k) => devSignIn(url, `poller${i + k}@bench.hk`)),
        )),
      );
    }
    const tokens = sessions.map((s) => ({ token: s.token }));
    await warmUp(tokens);
    await sleep(1000);

    const stop1Hz = PROFILE_1HZ
      ? await profileProcess(PROFILED, PROFILE_PORT, {
          intervalUs: 200,
          top: 25,
          saveTo: join(tmpdir(), `${PROFILED}-pollers-1hz.cpuprofile`),
        })
      : undefined;
    await measure(`${POLLERS} pollers at 1 Hz`, 'gateway', oneHertz(tokens, {}));
    await stop1Hz?.();

    // Overload: every poller at once, back to back (well past the in-flight bound), on the connections the
    // pollers kept open. The refusals (503 + Retry-After) should take milliseconds, not a place in a queue.
    // BENCH_OVERLOAD_RUNS=N repeats it (the first wave's tail varies from run to run); BENCH_ONLY=overload stops after it.
    const overloadClients = Math.max(POLLERS, 2 * Number(SHED_READS_MAX_IN_FLIGHT ?? 0));
    // Each run twice: as the clients come (most of them open a connection in the same instant), then
    // on connections opened just before, as a thousand browsers polling keep theirs: the difference
    // is what setting up ~1,000 connections at once costs the first wave (client and gateway alike).
    for (let run = 0; run < OVERLOAD_RUNS; run++) {
      await measure(
        `overload, ${overloadClients} clients back to back for ${OVERLOAD_S} s (${SHEDDING})`,
        'gateway',
        closedLoop(url, tokens, overloadClients, OVERLOAD_S, {}),
      );
      await sleep(2000);
      await openConnections(url, overloadClients);
      await measure(
        `overload on ${overloadClients} open connections, back to back for ${OVERLOAD_S} s (${SHEDDING})`,
        'gateway',
        closedLoop(url, tokens, overloadClients, OVERLOAD_S, {}),
      );
      await sleep(2000);
    }
    if (ONLY === 'overload') return;

    /** The bare Nest app at saturation (after a second's warm-up), as the yardstick of the gateway run before it. */
    const bareNest = async (when) => {
      await closedLoop(bareProc.url, tokens, SATURATION_CLIENTS, 1)(); // warm-up
      return measure(
        `bare Nest, ${SATURATION_CLIENTS} clients back to back (${when})`,
        'bare nest',
        closedLoop(bareProc.url, tokens, SATURATION_CLIENTS, SATURATION_S),
      );
    };
    const stopProfile = PROFILE
      ? await profileProcess(PROFILED, PROFILE_PORT, {
          intervalUs: 200,
          top: 25,
          saveTo: join(tmpdir(), `${PROFILED}-pollers.cpuprofile`),
        })
      : undefined;
    const gateway = await measure(
      `saturation, ${SATURATION_CLIENTS} clients back to back`,
      'gateway',
      closedLoop(url, tokens, SATURATION_CLIENTS, SATURATION_S),
    );
    await stopProfile?.();
    const bareAfterGateway = await bareNest('right after');
    // The same NATS request to jobs from a bare Nest route, on the same data right after: what is left
    // of the gap is the gateway's own work.
    await closedLoop(bareNatsProc.url, tokens, SATURATION_CLIENTS, 1)(); // warm-up
    const bareNats = await measure(
      `bare Nest + NATS (one jobs.status request, unknown job), ${SATURATION_CLIENTS} clients back to back`,
      'bare nest+nats',
      closedLoop(bareNatsProc.url, tokens, SATURATION_CLIENTS, SATURATION_S),
    );

    // Revalidating: each user polls its own job with the ETag of its last 200, as a browser does.
    const jobIds = await seedJobs(sessions.map((s) => s.userId));
    const pollers = sessions.map((s, i) => ({ token: s.token, jobId: jobIds[i], etag: undefined }));
    await warmUp(pollers);
    const missing = pollers.filter((p) => !p.etag).length;
    if (missing > 0) throw new Error(`${missing} pollers got no ETag in the warm-up`);
    await sleep(1000);
    console.log(
      `revalidating: each of ${POLLERS} users polls its own running job of ${JOB_RECIPIENTS} sent recipients with If-None-Match`,
    );
    let answeredBefore = await revalidationsAnswered(sys.gateway.metricsUrl);
    await measure(`${POLLERS} pollers at 1 Hz, revalidating`, 'gateway', oneHertz(pollers, {}));
    console.log(
      `  revalidations answered ${answeredSince(answeredBefore, await revalidationsAnswered(sys.gateway.metricsUrl))}`,
    );
    await sleep(2000);
    answeredBefore = await revalidationsAnswered(sys.gateway.metricsUrl);
    const stopRevalidatingProfile = PROFILE_REVALIDATING
      ? await profileProcess(PROFILED, PROFILE_PORT, {
          intervalUs: 200,
          top: 25,
          saveTo: join(tmpdir(), `${PROFILED}-pollers-revalidating.cpuprofile`),
        })
      : undefined;
    const revalidating = await measure(
      `saturation, ${SATURATION_CLIENTS} clients back to back, revalidating`,
      'gateway',
      closedLoop(url, pollers.slice(0, SATURATION_CLIENTS), SATURATION_CLIENTS, SATURATION_S, {}),
    );
    await stopRevalidatingProfile?.();
    console.log(
      `  revalidations answered ${answeredSince(answeredBefore, await revalidationsAnswered(sys.gateway.metricsUrl))}`,
    );
    const bareAfterRevalidating = await bareNest('right after');
    await sleep(2000);
    // Full answers: no If-None-Match, so each poll is the jobs service's 200 with the job's lists.
    const stopFullProfile = PROFILE_FULL
      ? await profileProcess(PROFILED, PROFILE_PORT, {
          intervalUs: 200,
          top: 25,
          saveTo: join(tmpdir(), `${PROFILED}-pollers-full.cpuprofile`),
        })
      : undefined;
    const full = await measure(
      `saturation, ${SATURATION_CLIENTS} clients back to back, full answers (a 200 with ${JOB_RECIPIENTS} sent entries, no If-None-Match)`,
      'gateway',
      closedLoop(
        url,
        pollers.slice(0, SATURATION_CLIENTS).map((p) => ({ ...p, etag: undefined, full: true })),
        SATURATION_CLIENTS,
        SATURATION_S,
        {},
      ),
    );
    await stopFullProfile?.();

    const bare = await bareNest('at the end');
    // Each gateway saturation run against the bare Nest run right after it: this machine's speed moves
    // by up to 2× within minutes (bare Nest's own CPU per request 0.047–0.086 ms over one day's runs),
    // so a yardstick measured minutes away says more about the machine than about the gateway.
    const ratio = (name, ours, yardstick, when) =>
      console.log(
        `${name} / bare Nest (${when}): ${(ours.reqPerS / yardstick.reqPerS).toFixed(2)}× the requests per second, ` +
          `${(ours.cpuMsPerRequest / yardstick.cpuMsPerRequest).toFixed(1)}× the CPU per request`,
      );
    console.log(
      `bare Nest over the run: ${[bareAfterGateway, bareAfterRevalidating, bare].map((b) => `${Math.round(b.reqPerS)} req/s at ${b.cpuMsPerRequest.toFixed(3)} ms`).join(', ')}; load average ${load()}`,
    );
    ratio('gateway', gateway, bareAfterGateway, 'right after it');
    ratio('gateway revalidating', revalidating, bareAfterRevalidating, 'right after it');
    ratio('gateway full answers', full, bare, 'right after it');
    ratio('gateway', gateway, bare, 'the one at the end');
    ratio('gateway revalidating', revalidating, bare, 'the one at the end');
    console.log(
      `gateway / bare Nest + NATS: ${(gateway.reqPerS / bareNats.reqPerS).toFixed(2)}× the requests per second, ` +
        `${(gateway.cpuMsPerRequest / bareNats.cpuMsPerRequest).toFixed(1)}× the CPU per request; load average ${load()}`,
    );
  } finally {
    await Promise.all([...pools.values()].map((p) => p.destroy()));
    await Promise.all([sys.stop(), bareProc.proc.stop(), bareNatsProc.proc.stop()]);
  }
  process.exit(0);
}
