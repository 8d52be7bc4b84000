#!/usr/bin/env node
// Dashboard benchmark: the read model at a million messages. Starts a private Postgres + NATS + the dashboard service + the gateway,
// bulk-loads the read model (setup, not measured), then measures:
//   1. GET /api/dashboard/{userId} through the gateway: p50 / p99 over random users;
//   2. events applied per second: a backlog drained after a restart, and live (publishing while applying).
// Build first: npx tsc -p libs/contracts/tsconfig.build.json && npx tsc -p services/dashboard/tsconfig.build.json
//              && npx tsc -p services/gateway/tsconfig.build.json
// Usage: node scripts/bench/dashboard-read.mjs [--users 1000] [--messages 1000000] [--requests 2000]
//        [--concurrency 8] [--events 50000]
// CPU seconds of every process are printed per measured stretch. GATEWAY_PROFILE=1 / DASHBOARD_PROFILE=1
// also CPU-profile that service during the first read run and print where its time goes.
import { randomUUID } from 'node:crypto';
import { cpuSeconds, postgresCpu } from './proc-lib.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Agent, request } from 'undici';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, EventBus, RpcClient } from '@bns/service-kit';
import { devSignIn, startSystem, waitFor } from '@bns/testing';
import { profileProcess } from './profile-lib.mjs';

const { values: opts } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    messages: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    events: { type: 'string', default: '50000' },
  },
});
const USERS = Number(opts.users);
const MESSAGES = Number(opts.messages);
const REQUESTS = Number(opts.requests);
const CONCURRENCY = Number(opts.concurrency);
const EVENTS = Number(opts.events);
const DURABLES = ['dashboard-events-message-status', 'dashboard-events-session-state'];
const PROFILE_PORTS = { gateway: 9339, dashboard: 9341 };
const PROFILED = Object.keys(PROFILE_PORTS).filter((name) => process.env[`${name.toUpperCase()}_PROFILE`] === '1');
const inspect = (name) =>
  PROFILED.includes(name) ? { NODE_OPTIONS: `--inspect=127.0.0.1:${PROFILE_PORTS[name]}` } : {};

const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function pool(items, concurrency, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

const sys = await startSystem({
  services: ['dashboard'],
  serviceEnv: {
    // The bench hammers few users hard; the per-user limit would answer 429 long before the database shows.
    gateway: {
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      LOG_LEVEL: 'warn',
      ...inspect('gateway'),
    },
    dashboard: { LOG_LEVEL: 'warn', ...inspect('dashboard') },
  },
});
let dashboardHandle = sys.services.find((s) => s.name === 'dashboard');
const db = new pg.Client({ connectionString: sys.postgres.url });
const nc = await connectNats(sys.nats.url, 'dashboard-bench');
try {
  await db.connect();
  // Every process (Postgres, NATS, the service, the gateway, this client) shares the machine: say how busy it is.
  log(
    `system up: gateway ${sys.gateway.url}; ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );

  const postmaster = cpuSeconds((await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).ppid;
  const cpuSnapshot = () => ({
    ...Object.fromEntries(sys.services.map((h) => [h.label, cpuSeconds(h.process.pid).own])),
    nats: cpuSeconds(sys.nats.process.pid).own,
    postgres: postgresCpu(postmaster),
    'bench client': cpuSeconds(process.pid).own,
  });
  /** CPU seconds each process used since `before`, and per request. */
  const cpuReport = (before, requests) => {
    const after = cpuSnapshot();
    return (
      '  CPU seconds (ms per request): ' +
      Object.keys(after)
        .map(
          (k) =>
            `${k} ${(after[k] - before[k]).toFixed(1)} (${(((after[k] - before[k]) * 1000) / requests).toFixed(2)})`,
        )
        .join(', ')
    );
  };

  // --- users: real dev tokens, so every request goes through the gateway's auth like a browser's.
  const users = new Array(USERS);
  await pool([...Array(USERS).keys()], 16, async (i) => {
    const s = await devSignIn(sys.gateway.url, `bench${i}@shop.hk`);
    users[i] = { userId: s.userId, token: s.token };
  });
  log(`${USERS} users signed in`);

  // --- bulk load (setup): messages spread over the last 12 months, then totals and monthly usage
  // derived from them exactly as the projection would have kept them.
  let t = Date.now();
  await db.query(`CREATE TEMP TABLE bench_users (n int PRIMARY KEY, user_id text NOT NULL)`);
  await db.query(`INSERT INTO bench_users SELECT * FROM unnest($1::int[], $2::text[])`, [
    users.map((_, i) => i),
    users.map((u) => u.userId),
  ]);
  await db.query(
    `
    INSERT INTO dashboard.messages (user_id, idempotency_key, job_id, recipient, content, status, outcome, error, created_at, sent_at, updated_at)
    SELECT u.user_id, 'bjob-' || (g / 50) || ':' || g, 'bjob-' || (g / 50), '852' || lpad((g % 100000000)::text, 8, '0'),
           'Hello customer ' || g || ', your order is ready for pickup at our Causeway Bay shop. Reply STOP to opt out.',
           s.status, CASE WHEN s.status = 'failed' THEN 'failed' ELSE 'sent' END,
           CASE WHEN s.status = 'failed' THEN 'Number is not on WhatsApp' END,
           ts, ts, ts
      FROM generate_series(0, $1::int - 1) AS g
      JOIN bench_users u ON u.n = g % $2::int
      CROSS JOIN LATERAL (SELECT (ARRAY['failed','sent','sent','sent','delivered','delivered','delivered','read','read','read'])[g % 10 + 1] AS status,
                                 now() - ((g::bigint * 7919) % (365 * 86400)) * interval '1 second' AS ts) s`,
    [MESSAGES, USERS],
  );
  await db.query(`
    INSERT INTO dashboard.user_totals (user_id, pending, sent, failed, delivered, read)
    SELECT user_id, count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'sent'),
           count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'read')
      FROM dashboard.messages GROUP BY user_id`);
  await db.query(`
    INSERT INTO dashboard.monthly_usage (user_id, month, sent_count, failed_count)
    SELECT user_id, date_trunc('month', sent_at AT TIME ZONE 'UTC')::date,
           count(*) FILTER (WHERE outcome = 'sent'), count(*) FILTER (WHERE outcome = 'failed')
      FROM dashboard.messages GROUP BY 1, 2`);
  await db.query(`VACUUM ANALYZE dashboard.messages`);
  await db.query(`ANALYZE dashboard.user_totals`);
  await db.query(`ANALYZE dashboard.monthly_usage`);
  const {
    rows: [{ count }],
  } = await db.query(`SELECT count(*)::int AS count FROM dashboard.messages`);
  log(`loaded ${count} messages for ${USERS} users in ${((Date.now() - t) / 1000).toFixed(1)} s (setup, not measured)`);

  const { rows: plan } = await db.query(
    `EXPLAIN (ANALYZE, BUFFERS) SELECT m.id::text AS id, m.job_id, m.recipient, m.content, m.status, m.error, m.sent_at, m.created_at
       FROM dashboard.messages m WHERE m.user_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT 10`,
    [users[0].userId],
  );
  console.log('  plan of the recent-messages query:\n    ' + plan.map((r) => r['QUERY PLAN']).join('\n    '));

  // --- 1. read latency through the gateway. undici's request on kept-alive connections, not fetch:
  // the client shares the machine with the system, and fetch costs it about twice the CPU per request.
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 60_000 });
  const get = async (u, limit) => {
    const s = performance.now();
    const res = await request(`${sys.gateway.url}/api/dashboard/${u.userId}${limit ? `?limit=${limit}` : ''}`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${u.token}` },
    });
    const text = await res.body.text();
    const body = JSON.parse(text);
    const ms = performance.now() - s;
    if (res.statusCode !== 200 || body.success !== true)
      throw new Error(`GET dashboard answered ${res.statusCode}: ${JSON.stringify(body)}`);
    // Never another user's read model.
    if (body.data.user.id !== u.userId) throw new Error(`GET dashboard of one user answered another user's data`);
    return { ms, data: body.data, bytes: Buffer.byteLength(text) };
  };
  const sample = await get(users[0]);
  if (sample.data.messages.length !== 10 || sample.data.stats.totalMessages !== MESSAGES / USERS) {
    throw new Error(
      `unexpected answer: ${sample.data.messages.length} messages, total ${sample.data.stats.totalMessages}`,
    );
  }
  await pool([...Array(200).keys()], CONCURRENCY, () => get(users[Math.floor(Math.random() * USERS)]));
  // The closed loop of CONCURRENCY clients keeps the machine saturated (its latency is mostly queueing);
  // one client at a time shows the path's own latency.
  for (const [limit, concurrency] of [
    [undefined, CONCURRENCY],
    [100, CONCURRENCY],
    [undefined, 1],
  ]) {
    const times = [];
    const stopProfiles =
      limit === undefined && concurrency > 1
        ? await Promise.all(
            PROFILED.map((name) =>
              profileProcess(name, PROFILE_PORTS[name], {
                saveTo: join(tmpdir(), `${name}-dashboard-read.cpuprofile`),
              }),
            ),
          )
        : [];
    const cpuBefore = cpuSnapshot();
    let bytes = 0;
    t = performance.now();
    await pool([...Array(REQUESTS).keys()], concurrency, async () => {
      const r = await get(users[Math.floor(Math.random() * USERS)], limit);
      times.push(r.ms);
      bytes += r.bytes;
    });
    const wall = (performance.now() - t) / 1000;
    times.sort((a, b) => a - b);
    log(
      `GET /api/dashboard/{userId}${limit ? `?limit=${limit}` : ''}: ${REQUESTS} requests, concurrency ${concurrency}, ` +
        `p50 ${pct(times, 50).toFixed(1)} ms, p90 ${pct(times, 90).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, ` +
        `max ${times.at(-1).toFixed(1)} ms, ${(REQUESTS / wall).toFixed(0)} req/s; answer ${(bytes / REQUESTS / 1024).toFixed(1)} KiB of JSON on average`,
    );
    console.log(cpuReport(cpuBefore, REQUESTS));
    for (const stop of stopProfiles) await stop();
  }

  // The same reads straight over NATS, without the gateway: how much of the time is the service's own.
  {
    const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 10_000 });
    const times = [];
    const cpuBefore = cpuSnapshot();
    t = performance.now();
    await pool([...Array(REQUESTS).keys()], CONCURRENCY, async () => {
      const s = performance.now();
      await rpc.call('dashboard.get', { userId: users[Math.floor(Math.random() * USERS)].userId, limit: 10 });
      times.push(performance.now() - s);
    });
    const wall = (performance.now() - t) / 1000;
    times.sort((a, b) => a - b);
    log(
      `dashboard.get over NATS (no gateway): ${REQUESTS} requests, concurrency ${CONCURRENCY}, ` +
        `p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, ${(REQUESTS / wall).toFixed(0)} req/s`,
    );
    console.log(cpuReport(cpuBefore, REQUESTS));
  }

  // --- 2. events applied per second
  const bus = new EventBus(nc);
  const jsm = await jetstreamManager(nc);
  const drained = () =>
    waitFor(
      async () => {
        for (const d of DURABLES) {
          const info = await jsm.consumers.info('EVENTS', d);
          if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
        }
        return true;
      },
      600_000,
      50,
      'the dashboard to apply the events',
    );
  // Half are sends of new messages, half the read acks that follow them: the mix a real job produces.
  const makeEvents = (tag) => {
    const perHalf = Math.floor(EVENTS / 2);
    const at = new Date().toISOString();
    const out = [];
    for (const status of ['sent', 'read']) {
      for (let i = 0; i < perHalf; i++) {
        const u = users[i % USERS];
        const jobId = `${tag}-${Math.floor(i / USERS)}`;
        const recipient = `8526${String(i).padStart(7, '0')}`;
        out.push({
          eventId: randomUUID(),
          userId: u.userId,
          at,
          jobId,
          idempotencyKey: `${jobId}:${recipient}`,
          recipient,
          status,
          content: `Hello ${recipient}`,
        });
      }
    }
    return out;
  };
  const publishAll = async (events) => {
    for (let i = 0; i < events.length; i += 1000) {
      await Promise.all(events.slice(i, i + 1000).map((e) => bus.emit('events.message.status', e)));
    }
  };
  const appliedSpan = async (events) => {
    const {
      rows: [r],
    } = await db.query(
      `SELECT count(*)::int AS n, extract(epoch FROM max(applied_at) - min(applied_at)) AS span
         FROM dashboard.applied_events WHERE event_id = ANY($1::text[])`,
      [events.map((e) => e.eventId)],
    );
    return r;
  };

  // 2a. Backlog: events published while the service is down, drained after it starts.
  await dashboardHandle.stop();
  const backlog = makeEvents('backlog');
  t = Date.now();
  await publishAll(backlog);
  log(`published ${backlog.length} events while the dashboard was down in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  t = Date.now();
  dashboardHandle = await sys.start('dashboard');
  await drained();
  const wallBacklog = (Date.now() - t) / 1000;
  const b = await appliedSpan(backlog);
  if (b.n !== backlog.length) throw new Error(`only ${b.n} of ${backlog.length} events applied`);
  log(
    `backlog: ${backlog.length} events applied in ${Number(b.span).toFixed(1)} s of applying = ${(backlog.length / Number(b.span)).toFixed(0)} events/s ` +
      `(${wallBacklog.toFixed(1)} s from process start, boot included)`,
  );

  // 2b. Live: publishing and applying at the same time.
  const live = makeEvents('live');
  t = Date.now();
  await publishAll(live);
  const published = (Date.now() - t) / 1000;
  await drained();
  const wallLive = (Date.now() - t) / 1000;
  const l = await appliedSpan(live);
  if (l.n !== live.length) throw new Error(`only ${l.n} of ${live.length} events applied`);
  log(
    `live: ${live.length} events published in ${published.toFixed(1)} s, all applied ${wallLive.toFixed(1)} s after the first publish = ${(live.length / wallLive).toFixed(0)} events/s end to end`,
  );

  log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const check = await get(users[0]);
  log(
    `user 0 after the events: totalMessages ${check.data.stats.totalMessages} (expected ${MESSAGES / USERS + 2 * Math.ceil(Math.floor(EVENTS / 2) / USERS)})`,
  );
} finally {
  await nc.close().catch(() => undefined);
  await db.end().catch(() => undefined);
  if (dashboardHandle && !sys.services.includes(dashboardHandle)) await dashboardHandle.stop().catch(() => undefined);
  await sys.stop();
}
