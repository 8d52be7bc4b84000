#!/usr/bin/env node
// Soak: the whole system under mixed traffic for a long while, to see whether any process's memory
// keeps growing. Signed-in users poll their job's status once a second (half of them revalidating
// with If-None-Match), start a small job now and then, open and close socket.io connections, and a
// hostile client sends bad requests (broken JSON, unknown paths, forged tokens, oversized bodies, deep
// JSON). Every minute it prints each process's RSS; at the end, each one's growth over the last 20
// minutes (the first minutes are the heap settling) against the goal of under 5%, and the load of the
// machine during the run. A benchmark, never part of `npm test`. Build first.
//   node scripts/bench/soak.mjs            (SOAK_MINUTES=30, SOAK_USERS=20)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { io } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import { devSignIn, simulatorScan, sleep, startSystem } from '@bns/testing';
import { rssKiB } from './jobs-lib.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const USERS = Number(process.env.SOAK_USERS ?? 20);
/** The growth is judged over this many last minutes (all but the first third when the run is shorter). */
const JUDGED_MINUTES = Math.min(20, Math.max(1, Math.floor((MINUTES * 2) / 3)));
const GOAL = 0.05;

const sys = await startSystem({
  shards: 2,
  env: {
    LOG_LEVEL: 'warn',
    SEND_DELAY_MS: '200',
    SIM_READY_DELAY_MS: '0',
    SIM_DELIVERED_DELAY_MS: '100',
    SIM_READ_DELAY_MS: '300',
  },
  serviceEnv: { gateway: { RATE_LIMIT_PER_SECOND: '50', RATE_LIMIT_BURST: '200' } },
});
const url = sys.gateway.url;
const processes = [sys.gateway, ...sys.services.filter((s) => s !== sys.gateway)];
const rows = [];
const sample = (minute) => {
  const row = { minute, load: loadavg()[0] };
  for (const p of processes) {
    try {
      row[p.label] = rssKiB(p.process.pid);
    } catch {
      row[p.label] = NaN;
    }
  }
  rows.push(row);
  process.stdout.write(
    `minute ${String(minute).padStart(2)}  load ${row.load.toFixed(1).padStart(5)}  ${processes.map((p) => `${p.label} ${(row[p.label] / 1024).toFixed(0)} MiB`).join('  ')}\n`,
  );
};

const counts = { requests: 0, errors: 0, byStatus: {} };
const call = async (path, init = {}) => {
  counts.requests++;
  try {
    const res = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body };
  } catch {
    counts.errors++;
    return undefined;
  }
};
const authed = (u, extra = {}) => ({ authorization: `Bearer ${u.token}`, ...extra });

const users = [];
for (let i = 0; i < USERS; i++) {
  const s = await devSignIn(url, `soak-${i}@bench.example`);
  await simulatorScan(url, s.token).catch(() => undefined);
  users.push({ ...s, jobId: undefined, etag: undefined });
}

async function startJob(u) {
  const numbers = Array.from({ length: 10 }, (_, i) => String(51_000_000 + Math.floor(Math.random() * 9_000_000) + i));
  const res = await call('/start-bulk-messages', {
    method: 'POST',
    headers: authed(u, { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
    body: JSON.stringify({
      clerkUserId: u.userId,
      message: 'Soak {{n}}',
      recipients: numbers.map((phone) => ({ phone, variables: { n: phone.slice(-3) } })),
    }),
  });
  if (res?.status === 200) {
    u.jobId = res.body.jobId;
    u.etag = undefined;
  }
}

const bad = [
  () =>
    call('/start-bulk-messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"message":',
    }),
  () => call(`/api/${randomUUID()}/${Math.random()}`),
  () =>
    call('/api/templates/x', { headers: { authorization: `Bearer ${randomUUID()}.${randomUUID()}.${randomUUID()}` } }),
  () =>
    call('/start-bulk-messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(200_000),
    }),
  (u) =>
    call('/start-bulk-messages', {
      method: 'POST',
      headers: authed(u, { 'content-type': 'application/json' }),
      body: `${'['.repeat(5000)}${']'.repeat(5000)}`,
    }),
  (u) => call(`/job-status/${randomUUID()}`, { headers: authed(u) }),
];

let running = true;
const loops = [];
// Pollers: one request a second per user, half revalidating.
for (const [i, u] of users.entries()) {
  loops.push(
    (async () => {
      await sleep(Math.random() * 1000);
      while (running) {
        if (u.jobId) {
          const res = await call(`/job-status/${u.jobId}`, {
            headers: authed(u, i % 2 === 0 && u.etag ? { 'if-none-match': u.etag } : {}),
          });
          u.etag = res?.headers.get('etag') ?? u.etag;
        }
        await sleep(1000);
      }
    })(),
  );
}
// Starts: each user every 30 s or so.
loops.push(
  (async () => {
    while (running) {
      await startJob(users[Math.floor(Math.random() * users.length)]);
      await sleep(1500);
    }
  })(),
);
// Sockets: connect, stay a moment, leave; two at a time.
for (let k = 0; k < 2; k++) {
  loops.push(
    (async () => {
      while (running) {
        const u = users[Math.floor(Math.random() * users.length)];
        const socket = io(url, {
          path: SOCKET.path,
          transports: ['websocket'],
          auth: { token: u.token },
          reconnection: false,
          forceNew: true,
        });
        await new Promise((r) => {
          socket.once('connect', r);
          socket.once('connect_error', r);
        });
        await sleep(500 + Math.random() * 2000);
        socket.close();
        await sleep(200);
      }
    })(),
  );
}
// A hostile client: five bad requests a second.
loops.push(
  (async () => {
    while (running) {
      await bad[Math.floor(Math.random() * bad.length)](users[0]);
      await sleep(200);
    }
  })(),
);

await Promise.all(users.map((u) => startJob(u)));
const started = Date.now();
sample(0);
for (let m = 1; m <= MINUTES; m++) {
  await sleep(started + m * 60_000 - Date.now());
  sample(m);
}
running = false;
await Promise.allSettled(loops);

const from = rows.find((r) => r.minute === MINUTES - JUDGED_MINUTES);
const to = rows.at(-1);
process.stdout.write(
  `\nrequests ${counts.requests} (answers by status ${JSON.stringify(counts.byStatus)}, ${counts.errors} with no answer)\n`,
);
process.stdout.write(
  `RSS growth over the last ${JUDGED_MINUTES} minutes (goal under ${GOAL * 100}%), load average ${(rows.reduce((s, r) => s + r.load, 0) / rows.length).toFixed(1)} over the run:\n`,
);
let worst = 0;
for (const p of processes) {
  const growth = (to[p.label] - from[p.label]) / from[p.label];
  worst = Math.max(worst, growth);
  process.stdout.write(
    `  ${p.label.padEnd(12)} ${(from[p.label] / 1024).toFixed(1)} → ${(to[p.label] / 1024).toFixed(1)} MiB  ${(growth * 100).toFixed(1)}%\n`,
  );
}
process.stdout.write(`worst growth ${(worst * 100).toFixed(1)}%: ${worst < GOAL ? 'within' : 'over'} the goal\n`);
await sys.stop();
