#!/usr/bin/env node
// The Business API under load, in one run on one machine:
//   1. POST /v1/messages at a fixed rate (default 500 requests/s, open loop: a request leaves on schedule
//      whether or not earlier ones were answered) with one API key: p50/p99 of the 202s, refusals by
//      status, and the gateway's CPU per request;
//   2. webhooks: 100 users × 10 endpoints (1,000 endpoints, each its own path on one local receiver that
//      answers 200 at once), then replies from the simulated phones, each a `message.received` event
//      fanned out to its user's 10 endpoints: deliveries/s at the receiver (first to last POST) and
//      event-to-POST p50/p99 (the event's own time to the POST's arrival), and the integrations service's
//      CPU per delivery;
//   3. gateway CPU per API request against the web's own job-status call in the same run: a closed loop
//      of C clients on GET /v1/campaigns/{id} (an API key; one jobs.status request per call) and then on
//      GET /job-status/{id} (the person's token) for the same job, CPU from /proc over each window.
// Build first (npm run build). Run alone: flock /tmp/bench.lock node scripts/bench/api.mjs
//   node scripts/bench/api.mjs [rate=500] [seconds=10] [repliesPerUser=5] [clients=16]
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { Pool } from 'undici';
import { connectNats, RpcClient } from '@bns/service-kit';
import { cpuSeconds } from './proc-lib.mjs';

const RATE = Number(process.argv[2] ?? 500);
const SECONDS = Number(process.argv[3] ?? 10);
const REPLIES = Number(process.argv[4] ?? 5);
const CLIENTS = Number(process.argv[5] ?? 16);
const USERS = 100;
const ENDPOINTS_PER_USER = 10;
const CLOSED_LOOP_S = 10;

const { api, devSignIn, simulatorInbound, sleep, startSystem, waitFor } = await import('@bns/testing');

const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
const ms = (n) => `${n.toFixed(1)} ms`;
const say = (line) => process.stdout.write(`${line}\n`);

// ---- the receiver: every endpoint is a path on it ----
const arrivals = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (body.type === 'message.received') arrivals.push({ at, eventAt: Date.parse(body.data.at) });
    } catch {
      // not a webhook
    }
    res.end('ok');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

say(
  `machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at start ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
const sys = await startSystem({
  shards: 1,
  services: ['sessions', 'jobs', 'integrations'],
  startTimeoutMs: 400_000,
  env: { LOG_LEVEL: 'warn', SIM_READY_DELAY_MS: '0', AUTO_LOGIN_PREF_TIMEOUT_MS: '100' },
  serviceEnv: {
    gateway: {
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
      V1_RATE_LIMIT_QUOTA: '1000000',
      V1_RATE_LIMIT_WINDOW_S: '60',
    },
    // Many transactional messages of one account at once; they are sent as fast as the simulator goes.
    jobs: {
      SEND_DELAY_MS: '0',
      SEND_JITTER_MS: '0',
      JOBS_MAX_ACTIVE_PER_USER: '100000',
      JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: '1000000',
    },
    integrations: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_CONCURRENCY: '256', WEBHOOK_POLL_MS: '100' },
  },
});
const pidOf = (name) => sys.services.find((s) => s.name === name).process.pid;
const gatewayPid = pidOf('gateway');
const integrationsPid = pidOf('integrations');
const cpu = (pid) => cpuSeconds(pid).own;

const nc = await connectNats(sys.nats.url, 'bench-api');
const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 30_000 });

/** A signed-in user whose simulated WhatsApp is linked (the sessions calls the web's socket makes). */
async function linked(email) {
  const who = await retrying(() => devSignIn(sys.gateway.url, email));
  await rpc.call('sessions.connect', { userId: who.userId, explicit: true });
  await rpc.call('sessions.simulator.scan', { userId: who.userId });
  await waitFor(
    async () => ['ready', 'exist'].includes((await rpc.call('sessions.status', { userId: who.userId })).state),
    60_000,
    200,
    'the link',
  );
  return { ...who, client: api(sys.gateway.url, who.token) };
}

/** `fn` again while the gateway sheds load (429/503 + Retry-After) or drops a connection under it. */
async function retrying(fn) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!/ (429|503) |fetch failed|other side closed/.test(err.message) || attempt >= 30) throw err;
      await sleep(200 + Math.random() * 800);
    }
  }
}

/** A reply from the simulated phone. */
const inbound = (token, from, text) => retrying(() => simulatorInbound(sys.gateway.url, token, from, text));

try {
  // ---- 1. POST /v1/messages at RATE/s ----
  const shop = await linked('shop@bench.example');
  const shopApi = api(sys.gateway.url, shop.token);
  const key = await shopApi.post('/api/keys', { name: 'bench', scopes: ['messages:send', 'read', 'campaigns:write'] });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  const pool = new Pool(sys.gateway.url, { connections: 256, pipelining: 1 });
  const auth = { authorization: `Bearer ${key.body.secret}`, 'content-type': 'application/json' };
  const post = async (i) => {
    const started = performance.now();
    const res = await pool.request({
      method: 'POST',
      path: '/v1/messages',
      headers: auth,
      body: JSON.stringify({
        to: String(60_000_000 + i),
        text: `Order ${i} has shipped`,
        metadata: { order: String(i) },
      }),
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      ms: performance.now() - started,
      id: res.statusCode === 202 ? JSON.parse(text).id : undefined,
    };
  };
  for (let i = 0; i < 50; i++) await post(1_000_000 + i); // warm-up
  const total = RATE * SECONDS;
  const results = [];
  const cpu0 = cpu(gatewayPid);
  const t0 = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(
      post(i).then(
        (r) => results.push(r),
        (err) => results.push({ status: 0, ms: NaN, err }),
      ),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - t0) / 1000;
  const gwCpu = cpu(gatewayPid) - cpu0;
  const accepted = results
    .filter((r) => r.status === 202)
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const byStatus = {};
  for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  say(
    `POST /v1/messages at ${RATE}/s for ${SECONDS} s: ${accepted.length}/${total} accepted (by status ${JSON.stringify(byStatus)}), ` +
      `achieved ${(results.length / elapsed).toFixed(0)} requests/s; 202 p50 ${ms(pct(accepted, 50))}, p99 ${ms(pct(accepted, 99))}, max ${ms(accepted.at(-1) ?? NaN)}; ` +
      `gateway CPU ${((1000 * gwCpu) / results.length).toFixed(3)} ms per request`,
  );
  const someMessage = results.find((r) => r.id)?.id;

  // ---- 2. webhooks: 1,000 endpoints, message.received fanned out ----
  const users = [];
  for (let u = 0; u < USERS; u++) {
    const who = await linked(`hooks-${u}@bench.example`);
    const client = who.client;
    for (let e = 0; e < ENDPOINTS_PER_USER; e++) {
      const res = await retrying(async () => {
        const r = await client.post('/api/webhooks', {
          url: `${receiverUrl}/u${u}/e${e}`,
          events: ['message.received'],
        });
        if (r.status === 429 || r.status === 503) throw new Error(` ${r.status} shed`);
        return r;
      });
      if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
    }
    users.push(who);
  }
  say(
    `webhooks: ${USERS} users × ${ENDPOINTS_PER_USER} endpoints = ${USERS * ENDPOINTS_PER_USER} endpoints on one local receiver`,
  );
  arrivals.length = 0;
  const expected = USERS * REPLIES * ENDPOINTS_PER_USER;
  const icpu0 = cpu(integrationsPid);
  const sendStart = Date.now();
  await Promise.all(
    users.map(async (u, i) => {
      for (let r = 0; r < REPLIES; r++) await inbound(u.token, `8529${String(1_000_000 + i * 10 + r)}`, `reply ${r}`);
    }),
  );
  const sentIn = (Date.now() - sendStart) / 1000;
  await waitFor(
    () => (arrivals.length >= expected ? true : undefined),
    600_000,
    200,
    'every webhook at the receiver',
  ).catch(() => undefined);
  const icpu = cpu(integrationsPid) - icpu0;
  const first = Math.min(...arrivals.map((a) => a.at));
  const last = Math.max(...arrivals.map((a) => a.at));
  const lags = arrivals.map((a) => a.at - a.eventAt).sort((a, b) => a - b);
  say(
    `webhooks: ${USERS * REPLIES} events (replies sent in ${sentIn.toFixed(1)} s) → ${arrivals.length}/${expected} POSTs received; ` +
      `${(arrivals.length / Math.max(0.001, (last - first) / 1000)).toFixed(0)} deliveries/s (first to last POST, ${((last - first) / 1000).toFixed(1)} s); ` +
      `event-to-POST p50 ${ms(pct(lags, 50))}, p99 ${ms(pct(lags, 99))}, max ${ms(lags.at(-1) ?? NaN)}; ` +
      `integrations CPU ${((1000 * icpu) / Math.max(1, arrivals.length)).toFixed(3)} ms per delivery`,
  );

  // ---- 3. gateway CPU per API request against the web's job-status, same job, same run ----
  if (someMessage) {
    const closedLoop = async (path, headers) => {
      const stopAt = performance.now() + CLOSED_LOOP_S * 1000;
      const lat = [];
      const c0 = cpu(gatewayPid);
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (performance.now() < stopAt) {
            const s = performance.now();
            const res = await pool.request({ method: 'GET', path, headers });
            await res.body.text();
            if (res.statusCode === 200) lat.push(performance.now() - s);
          }
        }),
      );
      const used = cpu(gatewayPid) - c0;
      lat.sort((a, b) => a - b);
      return {
        n: lat.length,
        cpuMs: (1000 * used) / Math.max(1, lat.length),
        p99: pct(lat, 99),
        rps: lat.length / CLOSED_LOOP_S,
      };
    };
    const v1 = await closedLoop(`/v1/campaigns/${someMessage}`, { authorization: `Bearer ${key.body.secret}` });
    const web = await closedLoop(`/job-status/${someMessage}`, { authorization: `Bearer ${shop.token}` });
    say(
      `gateway CPU per request, ${CLIENTS} clients × ${CLOSED_LOOP_S} s each, the same job: ` +
        `GET /v1/campaigns/{id} ${v1.cpuMs.toFixed(3)} ms (${v1.rps.toFixed(0)}/s, p99 ${ms(v1.p99)}); ` +
        `GET /job-status/{id} ${web.cpuMs.toFixed(3)} ms (${web.rps.toFixed(0)}/s, p99 ${ms(web.p99)}); ratio ${(v1.cpuMs / web.cpuMs).toFixed(2)}×`,
    );
  }
  say(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  await pool.close();
} finally {
  await nc.drain().catch(() => undefined);
  receiver.closeAllConnections();
  receiver.close();
  await sys.stop();
}
