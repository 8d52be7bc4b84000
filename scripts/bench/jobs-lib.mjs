// Shared pieces of the jobs benchmarks: the system (sessions shards + jobs + gateway on a private
// Postgres and NATS), linked users, and counters fed by the events jobs publishes.
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byRole, cpuSeconds, postgresCpu, postgresCpuByPid, syscalls, threads } from './proc-lib.mjs';
import { profileProcess } from './profile-lib.mjs';
import { connectNats, RpcClient } from '@bns/service-kit';
import pg from 'pg';
import { api, devSignIn, freePort, sleep, startNats, startPostgres, startSystem, waitFor } from '@bns/testing';

export const SHARDS = 2;

export const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
export const mib = (kib) => (kib / 1024).toFixed(1);

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs `fn(i)` for i in [0, n) with at most `concurrency` at once. */
export async function pool(n, concurrency, fn) {
  let next = 0;
  const out = new Array(n);
  const worker = async () => {
    for (let i = next++; i < n; i = next++) out[i] = await fn(i);
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker));
  return out;
}

/**
 * BENCH_PROFILE=jobs, =gateway or =sessions-0 (one shard; JOBS_PROFILE=1 is =jobs): that service runs
 * with an inspector, and `meter` CPU-profiles it over the measured stretch ($TMPDIR/<service>-bench-<n>.cpuprofile,
 * n counting the measured stretches of one run, from 1).
 */
const PROFILED = process.env.BENCH_PROFILE ?? (process.env.JOBS_PROFILE === '1' ? 'jobs' : undefined);
if (PROFILED !== undefined && !['jobs', 'gateway', 'sessions-0', 'sessions-1'].includes(PROFILED))
  throw new Error('BENCH_PROFILE: jobs, gateway, sessions-0 or sessions-1');
const INSPECT_PORT = 9342;
let profiles = 0;
/** With BENCH_PROFILE set: CPU-profiles that service from now until the returned function is called (prints its self time). */
export async function profileFromNow() {
  if (!PROFILED) return async () => undefined;
  return profileProcess(PROFILED, INSPECT_PORT, {
    saveTo: join(tmpdir(), `${PROFILED}-bench-${++profiles}.cpuprofile`),
  });
}
export const inspected = (name) => (PROFILED === name ? { NODE_OPTIONS: `--inspect=127.0.0.1:${INSPECT_PORT}` } : {});

/**
 * The system on a private Postgres and NATS. `jobsEnv` reaches the jobs service; `options.env` every
 * service (e.g. the simulated engine's receipt delays for sessions); `options.onLine(label, line)`
 * sees each line a service writes.
 */
export async function startBench(jobsEnv = {}, options = {}) {
  // JOBS_STEP_* in the bench's environment reach the jobs service (to compare batching settings).
  jobsEnv = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k.startsWith('JOBS_STEP_') || k === 'JOBS_START_CONCURRENCY'),
    ),
    ...jobsEnv,
  };
  // pg_stat_statements counts the statements per message (see `meter`). BENCH_PG_FLAGS adds server
  // flags, e.g. "-c pg_stat_statements.track=top" to see what counting nested statements costs.
  // BENCH_PG_LOG=<file> appends the server's log there, e.g. with auto_explain's flags to see the plans:
  // "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.sample_rate=0.02".
  const extra = (process.env.BENCH_PG_FLAGS ?? '').split(' ').filter(Boolean);
  const logFile = process.env.BENCH_PG_LOG;
  const postgres = await startPostgres({
    ...(logFile ? { onLog: (line) => appendFileSync(logFile, `${line}\n`) } : {}),
    flags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', ...extra],
  });
  // With its monitoring endpoint, so `meter` can count each connection's NATS messages.
  const nats = await startNats({ monitorPort: await freePort() });
  // startSystem stops only what it started itself: a failed start must not leave these two running.
  const sys = await startSystem({
    postgres,
    nats,
    shards: SHARDS,
    services: ['sessions', 'jobs'],
    // A loaded shared machine can take minutes to start the services.
    startTimeoutMs: 400_000,
    ...(options.onLine ? { onLine: options.onLine } : {}),
    env: {
      SIM_READY_DELAY_MS: '0',
      SIM_QR_INTERVAL_MS: '20000',
      AUTO_LOGIN_PREF_TIMEOUT_MS: '100',
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    serviceEnv: {
      jobs: { ...jobsEnv, ...inspected('jobs') },
      'sessions-0': inspected('sessions-0'),
      'sessions-1': inspected('sessions-1'),
      // Benchmarks sign in and poll for many users from one address.
      gateway: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ...inspected('gateway') },
    },
  }).catch(async (err) => {
    await nats.stop().catch(() => undefined);
    await postgres.stop().catch(() => undefined);
    throw err;
  });
  const nc = await connectNats(sys.nats.url, 'bench-jobs');
  const rpc = new RpcClient(nc, { shards: SHARDS, timeoutMs: 30_000 });
  const jobs = sys.services.find((h) => h.name === 'jobs');
  return {
    sys,
    nc,
    rpc,
    jobsPid: jobs.process.pid,
    async stop() {
      await nc.drain().catch(() => undefined);
      await sys.stop();
      await nats.stop();
      await postgres.stop();
    },
  };
}

/**
 * A dev sign-in that waits out the gateway's refusals (429/503 + Retry-After: its load shedder refuses a
 * second request in progress from one address while its event loop lags, as on a loaded machine).
 */
export async function signIn(gateway, email) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await devSignIn(gateway, email);
    } catch (err) {
      if (!/ (429|503) |fetch failed/.test(err.message) || attempt >= 30) throw err;
      await sleep(500 + Math.random() * 1500);
    }
  }
}

/** Signs in `n` users through the gateway and links each one's simulated WhatsApp. */
export async function linkedUsers(bench, n, prefix, concurrency = 20) {
  const gateway = bench.sys.gateway.url;
  const users = await pool(n, concurrency, async (i) => {
    const session = await signIn(gateway, `${prefix}-${i}@bench.example`);
    await bench.rpc.call('sessions.connect', { userId: session.userId, explicit: true });
    await bench.rpc.call('sessions.simulator.scan', { userId: session.userId });
    return { ...session, client: api(gateway, session.token) };
  });
  await waitFor(
    async () => {
      const states = await pool(users.length, 50, (i) =>
        bench.rpc.call('sessions.status', { userId: users[i].userId }),
      );
      return states.every((s) => s.state === 'ready' || s.state === 'exist');
    },
    120_000,
    500,
    'every link ready',
  );
  return users;
}

/** Counts the messages sent or failed, per job and in all, as NATS carries them (core subscription). */
export function countResults(nc) {
  // From the jobs' progress reports (sent + failed, as each report counts them), not from one event per
  // message: a running job at delay 0 reports a few times a second, and its last report (completed, or
  // paused/failed) is written in the transaction that recorded its last outcome. So the observer costs the
  // machine next to nothing and still sees the end at the same moment.
  const perJob = new Map();
  const finished = [];
  /** When each job's first outcome was reported (`performance.now()`). */
  const firsts = [];
  /** [time, total] after every report that moved the total: the run's rate over time. */
  const timeline = [];
  /** When each job's first `running` report came (its first step, before any outcome). */
  const firstHeard = [];
  const heard = new Set();
  let total = 0;
  const sub = nc.subscribe('events.job.progress', {
    callback: (err, msg) => {
      if (err) return;
      const e = msg.json();
      if (e.status === 'running' && !heard.has(e.jobId)) {
        heard.add(e.jobId);
        firstHeard.push(performance.now());
      }
      const done = (e.progress?.sent ?? 0) + (e.progress?.failed ?? 0);
      const seen = perJob.get(e.jobId) ?? 0;
      if (done <= seen) return;
      perJob.set(e.jobId, done);
      const now = performance.now();
      if (seen === 0) firsts.push(now);
      total += done - seen;
      timeline.push([now, total]);
      if (e.status === 'completed') finished.push(performance.now());
    },
  });
  return {
    get total() {
      return total;
    },
    of: (jobId) => perJob.get(jobId) ?? 0,
    finished,
    firsts,
    firstHeard,
    timeline,
    stop: () => sub.unsubscribe(),
  };
}

/**
 * Starts a job the way a well-behaved client does: an overloaded gateway answers 503 (or 429) with
 * Retry-After, and the start is tried again with the same Idempotency-Key, so it is one job.
 */
/** One job of `count` messages from `user`, waited out (JIT, connections, caches), before anything is measured. */
export async function warmUp(user, results, count = 50) {
  await startJob(user, { message: 'warm-up', phoneNumbers: numbers(count, 50_000_000) });
  await waitFor(() => results.total >= count, 60_000, 50, 'warm-up');
}

export async function startJob(user, body) {
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const res = await user.client.post(
      '/start-bulk-messages',
      { clerkUserId: user.userId, ...body },
      { 'Idempotency-Key': key },
    );
    if (res.status === 200) return res.body;
    if ((res.status !== 503 && res.status !== 429) || attempt >= 30)
      throw new Error(`start: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    startRetries++;
    await sleep(Math.max(100, Number(res.headers.get('retry-after') ?? 1) * 1000) * (0.5 + Math.random()));
  }
}

let startRetries = 0;
/** How many starts were answered 503/429 and tried again (overload shed by the gateway). */
export const startRetried = () => startRetries;

export const numbers = (n, from = 60_000_000) => Array.from({ length: n }, (_, i) => String(from + i));
export { sleep, waitFor };

/**
 * Each client connection's message and byte counts so far, from nats-server's monitoring endpoint
 * (`/connz`), by cid with the connection's name; undefined without the endpoint.
 */
async function natsConnections(monitorUrl) {
  if (!monitorUrl) return undefined;
  try {
    const connz = await (await fetch(`${monitorUrl}/connz?limit=1024`)).json();
    return new Map(
      connz.connections.map((c) => [
        c.cid,
        { name: c.name || `cid ${c.cid}`, inMsgs: c.in_msgs, outMsgs: c.out_msgs, outBytes: c.out_bytes },
      ]),
    );
  } catch {
    return undefined;
  }
}

/** Per message, by connection name (connections of one name summed): what it sent and what it was sent. */
function natsPerMessage(before, after, messages) {
  const out = {};
  for (const [cid, a] of after) {
    const b = before.get(cid) ?? { inMsgs: 0, outMsgs: 0, outBytes: 0 };
    // The server's "in" is what the client sent; its "out" what the client received.
    const sent = a.inMsgs - b.inMsgs;
    const received = a.outMsgs - b.outMsgs;
    if (sent + received === 0) continue;
    const name = a.name.replace(/@.*$/, '');
    const n = (out[name] ??= { sent: 0, received: 0, receivedBytes: 0 });
    n.sent += sent / messages;
    n.received += received / messages;
    n.receivedBytes += (a.outBytes - b.outBytes) / messages;
  }
  return Object.fromEntries(
    Object.entries(out).sort((x, y) => y[1].sent + y[1].received - (x[1].sent + x[1].received)),
  );
}

/**
 * Where the work of a stretch of messages went: Postgres commits, statements and CPU, the CPU of each
 * service, nats-server and this process, and the rows each table of the system's database had
 * inserted, updated (how many of those HOT) and deleted, per message. `start()` before, `report(label, messages)` after; `report` prints the
 * figures and returns them (per message: commits, statements, postgresMs, cpuMs by process name).
 * Options: `database` counts the commits and statements of another database on the same server (the
 * system's by default; an array counts several, `undefined` in it being the system's); `processes` adds processes to the CPU list ([{ name, pid }]); `top` is how
 * many of the most frequent statements are listed. `postmaster` is the Postgres server's pid (for
 * proc-lib's postgresCpu).
 */
export async function meter(bench, { database, processes: extra = [], top = 40 } = {}) {
  const db = new pg.Client({ connectionString: bench.sys.postgres.url });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const system = (await db.query('SELECT current_database() AS d')).rows[0].d;
  const datnames = [database ?? system].flat().map((d) => d ?? system);
  const dbids = (await db.query('SELECT oid FROM pg_database WHERE datname = ANY($1)', [datnames])).rows.map(
    (r) => r.oid,
  );
  const backend = (await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const postmaster = cpuSeconds(backend).ppid;
  // By name, once each (a caller's extra process of the same name replaces the default one).
  const processes = () => [
    ...new Map(
      [
        ...bench.sys.services.map((h) => ({ name: h.label ?? h.name, pid: h.process.pid })),
        { name: 'gateway', pid: bench.sys.gateway.process.pid },
        { name: 'nats-server', pid: bench.sys.nats.process.pid },
        { name: 'bench', pid: process.pid },
        ...extra,
      ].map((p) => [p.name, p]),
    ).values(),
  ];
  const counters = async () => {
    const commits = Number(
      (await db.query('SELECT sum(xact_commit) AS n FROM pg_stat_database WHERE datname = ANY($1)', [datnames])).rows[0]
        .n,
    );
    // Connections opened (a new backend: a fork, and its caches and prepared statements made afresh).
    const sessions = Number(
      (await db.query('SELECT sum(sessions) AS n FROM pg_stat_database WHERE datname = ANY($1)', [datnames])).rows[0].n,
    );
    const statements = Number(
      (
        await db.query(
          "SELECT coalesce(sum(calls), 0) AS n FROM pg_stat_statements WHERE dbid = ANY($1) AND query NOT ILIKE '%pg_stat%'",
          [dbids],
        )
      ).rows[0].n,
    );
    const cpu = Object.fromEntries(processes().map((p) => [p.name, cpuSeconds(p.pid).own]));
    const io = Object.fromEntries(processes().map((p) => [p.name, syscalls(p.pid)]));
    const threaded = Object.fromEntries(processes().map((p) => [p.name, threads(p.pid)]));
    const nats = await natsConnections(bench.sys.nats.monitorUrl);
    // WAL written by the whole server (every database): what each row version and index entry costs in I/O.
    const wal = (await db.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
    const tables = await tableCounts();
    // Whose each backend is, read with its CPU: a pool closes idle connections before a later reading.
    const roles = (
      await db.query("SELECT pid, coalesce(nullif(application_name, ''), backend_type) AS role FROM pg_stat_activity")
    ).rows.map((r) => [Number(r.pid), r.role]);
    return {
      commits,
      roles,
      statements,
      sessions,
      postgres: postgresCpu(postmaster),
      postgresByPid: postgresCpuByPid(postmaster),
      cpu,
      io,
      threaded,
      nats,
      wal,
      tables,
      at: performance.now(),
    };
  };
  /** Rows each table had inserted, updated (HOT) and deleted so far, as the server's statistics have them. */
  const tableCounts = async () =>
    Object.fromEntries(
      (
        await db.query(
          "SELECT schemaname || '.' || relname AS t, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del, autovacuum_count AS vac, autoanalyze_count AS ana FROM pg_stat_user_tables",
        )
      ).rows.map((r) => [
        r.t,
        {
          ins: Number(r.ins),
          upd: Number(r.upd),
          hot: Number(r.hot),
          del: Number(r.del),
          vac: Number(r.vac),
          ana: Number(r.ana),
        },
      ]),
    );
  /**
   * The table counts once they settle: a backend that went idle with counts pending reports them within
   * 10 s (Postgres's idle flush interval), so a reading taken as the stretch ends misses some rows.
   * Waits until the total has not moved for 11 s in a row (45 s at most).
   */
  const settledTableCounts = async () => {
    const total = (t) => Object.values(t).reduce((sum, c) => sum + c.ins + c.upd + c.del, 0);
    let last = await tableCounts();
    for (let quiet = 0, waited = 0; quiet < 11 && waited < 45; waited++) {
      await sleep(1000);
      const now = await tableCounts();
      quiet = total(now) === total(last) ? quiet + 1 : 0;
      last = now;
    }
    return last;
  };
  let before;
  let stopProfile;
  return {
    postmaster,
    async start() {
      await db.query('SELECT pg_stat_statements_reset()');
      if (PROFILED)
        stopProfile = await profileProcess(PROFILED, INSPECT_PORT, {
          saveTo: join(tmpdir(), `${PROFILED}-bench-${++profiles}.cpuprofile`),
        });
      before = await counters();
    },
    /** Prints the figures per message for `messages` messages since `start()`, and returns them. */
    async report(label, messages) {
      const after = await counters();
      await stopProfile?.();
      // Row writes from the settled counts (everything else is as the stretch ended).
      after.tables = await settledTableCounts();
      const per = (x) => x / messages;
      const figures = {
        commits: per(after.commits - before.commits),
        statements: per(after.statements - before.statements),
        postgresMs: per(after.postgres - before.postgres) * 1000,
        walBytes: per(
          Number(
            (await db.query('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn) AS b', [after.wal, before.wal])).rows[0].b,
          ),
        ),
        cpuMs: Object.fromEntries(
          Object.keys(after.cpu).map((name) => [name, per(after.cpu[name] - (before.cpu[name] ?? 0)) * 1000]),
        ),
      };
      // Whose Postgres CPU it is: each backend by the connection's application name (the service's
      // schema) as the readings found it, background processes by type; `exited` is what ended
      // processes used (autovacuum workers).
      const roles = new Map([...before.roles, ...after.roles]);
      const roleMs = Object.entries(byRole(before.postgresByPid, after.postgresByPid, roles))
        .map(([role, s]) => [role, per(s) * 1000])
        .filter(([, ms]) => ms >= 0.005)
        .sort((a, b) => b[1] - a[1]);
      figures.postgresByRoleMs = Object.fromEntries(roleMs);
      console.log(
        `${label}: ${figures.commits.toFixed(2)} Postgres commits and ${figures.statements.toFixed(1)} statements per message; ` +
          `CPU per message: postgres ${figures.postgresMs.toFixed(2)} ms, ` +
          Object.entries(figures.cpuMs)
            .map(([name, ms]) => `${name} ${ms.toFixed(2)} ms`)
            .join(', '),
      );
      console.log(
        `  Postgres connections opened in the window: ${after.sessions - before.sessions}; WAL written (whole server): ${figures.walBytes.toFixed(0)} bytes per message`,
      );
      // Each socket write is a system call (and on loopback, the receiver's wake-up): batching shows here.
      figures.syscalls = Object.fromEntries(
        Object.keys(after.io).map((name) => [
          name,
          {
            writes: per(after.io[name].writes - (before.io[name]?.writes ?? 0)),
            reads: per(after.io[name].reads - (before.io[name]?.reads ?? 0)),
          },
        ]),
      );
      console.log(
        `  system calls per message (write / read): ${Object.entries(figures.syscalls)
          .map(([name, c]) => `${name} ${c.writes.toFixed(2)} / ${c.reads.toFixed(2)}`)
          .join(', ')}`,
      );
      // A Node process's CPU off its main thread is V8's (garbage collection, optimizing compilation).
      figures.threads = Object.fromEntries(
        Object.keys(after.threaded).map((name) => {
          const [a, b] = [
            after.threaded[name],
            before.threaded[name] ?? { main: 0, others: 0, voluntary: 0, involuntary: 0 },
          ];
          return [
            name,
            {
              mainMs: per(a.main - b.main) * 1000,
              othersMs: Math.max(0, per(a.others - b.others) * 1000),
              voluntary: per(a.voluntary - b.voluntary),
              involuntary: per(a.involuntary - b.involuntary),
            },
          ];
        }),
      );
      console.log(
        `  CPU per message on the main thread / other threads, and context switches per message (voluntary / preempted): ${Object.entries(
          figures.threads,
        )
          // nats-server is Go: its goroutines run on threads of their own, none of them the main one.
          .map(
            ([name, t]) =>
              `${name} ${name === 'nats-server' ? `${(t.mainMs + t.othersMs).toFixed(2)} ms (Go threads)` : `${t.mainMs.toFixed(2)} / ${t.othersMs.toFixed(2)} ms`}, ${t.voluntary.toFixed(2)} / ${t.involuntary.toFixed(2)}`,
          )
          .join('; ')}`,
      );
      // What crossed NATS, by connection (its name): messages each one sent to the server and was sent by it.
      if (after.nats && before.nats) {
        figures.nats = natsPerMessage(before.nats, after.nats, messages);
        console.log(
          `  NATS messages per message by connection (sent / received, bytes received): ${Object.entries(figures.nats)
            .map(
              ([name, n]) =>
                `${name} ${n.sent.toFixed(2)} / ${n.received.toFixed(2)} (${n.receivedBytes.toFixed(0)} B)`,
            )
            .join(', ')}`,
        );
      }
      console.log(
        `  postgres CPU per message by connection/process: ${roleMs.map(([role, ms]) => `${role} ${ms.toFixed(2)} ms`).join(', ')}`,
      );
      const rows = await db.query(
        "SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements WHERE dbid = ANY($1) AND query NOT ILIKE '%pg_stat%' ORDER BY calls DESC LIMIT $2",
        [dbids, top],
      );
      for (const r of rows.rows) console.log(`  ${per(Number(r.calls)).toFixed(2)}/msg  ${r.q}`);
      // Where Postgres spent its execution time (and its planning, when tracked; round trips are not in these).
      const timed = await db.query(
        "SELECT total_exec_time + total_plan_time AS ms, total_plan_time AS plan, shared_blks_hit / greatest(calls, 1) AS blocks, rows::float8 / greatest(calls, 1) AS rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements WHERE dbid = ANY($1) AND query NOT ILIKE '%pg_stat%' ORDER BY 1 DESC LIMIT 10",
        [dbids],
      );
      const total = timed.rows.reduce((sum, r) => sum + Number(r.ms), 0);
      console.log(`  most execution time (${(total / messages).toFixed(3)} ms/msg in these ${timed.rows.length}):`);
      // Planning is counted only with BENCH_PG_FLAGS="-c pg_stat_statements.track_planning=on".
      const planned = timed.rows.some((r) => Number(r.plan) > 0);
      for (const r of timed.rows) {
        const plan = planned ? ` (planning ${(Number(r.plan) / messages).toFixed(3)})` : '';
        console.log(
          `  ${(Number(r.ms) / messages).toFixed(3)} ms/msg${plan}  ${Number(r.blocks).toFixed(0).padStart(5)} blocks/call ${Number(r.rows).toFixed(1).padStart(5)} rows/call  ${r.q}`,
        );
      }
      // Row writes per message by table (the system's tables: not printed when counting another database);
      // an update that is not HOT also writes every index of the table.
      const written = Object.entries(database ? {} : after.tables)
        .map(([t, a]) => {
          const b = before.tables[t] ?? { ins: 0, upd: 0, hot: 0, del: 0, vac: 0, ana: 0 };
          return {
            t,
            ins: a.ins - b.ins,
            upd: a.upd - b.upd,
            hot: a.hot - b.hot,
            del: a.del - b.del,
            vac: a.vac - b.vac,
            ana: a.ana - b.ana,
          };
        })
        .filter((w) => w.ins + w.upd + w.del + w.vac + w.ana > 0)
        .sort((x, y) => y.ins + y.upd + y.del - (x.ins + x.upd + x.del));
      // Autovacuum and autoanalyze runs in the window: their workers' CPU is in `exited` above.
      if (written.length > 0)
        console.log(
          '  row writes per message by table (inserted, updated of which HOT, deleted), and autovacuum/autoanalyze runs in the window:',
        );
      figures.rowWrites = per(written.reduce((sum, w) => sum + w.ins + w.upd + w.del, 0));
      figures.rowWritesByTable = Object.fromEntries(written.map((w) => [w.t, per(w.ins + w.upd + w.del)]));
      for (const w of written) {
        const auto = w.vac + w.ana > 0 ? `  (autovacuum ${w.vac}, autoanalyze ${w.ana})` : '';
        console.log(
          `  ${per(w.ins).toFixed(2).padStart(6)} ins ${per(w.upd).toFixed(2).padStart(6)} upd (${per(w.hot).toFixed(2)} HOT) ${per(w.del).toFixed(2).padStart(6)} del  ${w.t}${auto}`,
        );
      }
      return figures;
    },
    stop: () => db.end(),
  };
}
