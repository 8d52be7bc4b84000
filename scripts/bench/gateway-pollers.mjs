#!/usr/bin/env node
// The gateway's hot path: N signed-in users each polling GET /job-status/{jobId} once a second (the
// spec's first polling step), then a closed loop of C clients to find saturation. Printed: p50/p99
// latency, requests answered, and the gateway's CPU per request (from /proc/<pid>/stat over the
// measured window), plus the CPU of every other process so you can see where the time goes.
// The job id is unknown to the jobs service, so every poll is a full trip (auth, rate limit, NATS
// request to jobs, its database lookup, a 404 back).
// Build first. GATEWAY_PROFILE=1 also CPU-profiles the gateway during the saturation run (through its
// inspector) and prints where its time goes, by package and by function.
//   node scripts/bench/gateway-pollers.mjs [pollers=1000] [seconds=20] [saturationClients=64]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Agent, setGlobalDispatcher } from 'undici';
import { devSignIn, sleep, startSystem } from '@bns/testing';

const POLLERS = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 20);
const SATURATION_CLIENTS = Number(process.argv[4] ?? 64);
const TICK_S = 100; // USER_HZ on Linux
const PROFILE = process.env.GATEWAY_PROFILE === '1';
const PROFILE_PORT = 9339;

/** Starts the V8 profiler in the gateway through its inspector; the returned function stops it and prints a summary. */
async function profileGateway() {
  const { default: WebSocket } = await import('ws');
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${PROFILE_PORT}/json/list`)).json();
  const ws = new WebSocket(webSocketDebuggerUrl);
  await new Promise((r) => ws.once('open', r));
  let id = 0;
  const pending = new Map();
  ws.on('message', (m) => {
    const msg = JSON.parse(m.toString());
    pending.get(msg.id)?.(msg.result);
  });
  const send = (method, params = {}) => new Promise((resolve) => {
    pending.set(++id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 200 });
  await send('Profiler.start');
  return async () => {
    const { profile } = await send('Profiler.stop');
    ws.close();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const counts = new Map();
    for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
    const total = profile.samples.length;
    const byPackage = new Map();
    const byFunction = new Map();
    for (const [nodeId, n] of counts) {
      const { functionName, url } = byId.get(nodeId).callFrame;
      const pkg = url.includes('node_modules/')
        ? url.split('node_modules/').at(-1).split('/').slice(0, url.split('node_modules/').at(-1).startsWith('@') ? 2 : 1).join('/')
        : url.startsWith('node:') ? 'node core' : url === '' ? `(${functionName || 'native'})` : url.replace(/^file:\/\/.*\/(services|libs)\//, '$1/');
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + n);
      const fn = `${functionName || '(anonymous)'} ${pkg}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + n);
    }
    const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, n]) => `    ${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`).join('\n');
    console.log(`  gateway profile (self time, ${total} samples):\n  by package:\n${top(byPackage, 18)}\n  by function:\n${top(byFunction, 25)}`);
  };
}

setGlobalDispatcher(new Agent({ connections: null, keepAliveTimeout: 60_000, pipelining: 1 }));

const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

const sys = await startSystem({
  services: ['jobs', 'sessions', 'templates'],
  shards: 1,
  serviceEnv: {
    gateway: {
      RATE_LIMIT_BURST: '1000000',
      RATE_LIMIT_PER_SECOND: '100000',
      LOG_LEVEL: 'info',
      ...(PROFILE ? { NODE_OPTIONS: `--inspect=127.0.0.1:${PROFILE_PORT}` } : {}),
    },
  },
});
const url = sys.gateway.url;
const procs = [...sys.services.map((s) => ({ label: s.label, pid: s.process.pid })), { label: 'nats', pid: sys.nats.process.pid }, { label: 'bench client', pid: process.pid }];

async function measure(name, run) {
  const before = procs.map((p) => cpuTicks(p.pid));
  const t0 = performance.now();
  const result = await run();
  const wallS = (performance.now() - t0) / 1000;
  const used = procs.map((p, i) => ({ label: p.label, cpuS: (cpuTicks(p.pid) - before[i]) / TICK_S }));
  const gatewayCpu = used.find((u) => u.label === 'gateway').cpuS;
  const times = result.times.sort((a, b) => a - b);
  const statuses = Object.entries(result.statuses).map(([s, n]) => `${s}×${n}`).join(' ');
  console.log(
    `${name}: ${times.length} requests in ${wallS.toFixed(1)} s (${(times.length / wallS).toFixed(0)} req/s; ${statuses}); ` +
      `p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, max ${times.at(-1)?.toFixed(0)} ms; ` +
      `gateway CPU ${((gatewayCpu * 1000) / Math.max(1, times.length)).toFixed(3)} ms/request`,
  );
  console.log(`  CPU seconds: ${used.map((u) => `${u.label} ${u.cpuS.toFixed(1)}`).join(', ')}`);
}

async function poll(token, times, statuses) {
  const t = performance.now();
  const res = await fetch(`${url}/job-status/${randomUUID()}`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  times.push(performance.now() - t);
  statuses[res.status] = (statuses[res.status] ?? 0) + 1;
}

try {
  console.log(`${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${POLLERS} pollers at 1 Hz for ${SECONDS} s`);
  const tokens = [];
  for (let i = 0; i < POLLERS; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, POLLERS - i) }, (_, k) => devSignIn(url, `poller${i + k}@bench.hk`)));
    tokens.push(...batch.map((s) => s.token));
  }
  // Warm-up: every poller once (connections opened, caches filled, JIT warm).
  await Promise.all(tokens.map((t) => poll(t, [], {})));
  await sleep(1000);

  await measure(`${POLLERS} pollers at 1 Hz`, async () => {
    const times = [];
    const statuses = {};
    const end = performance.now() + SECONDS * 1000;
    await Promise.all(
      tokens.map(async (token) => {
        await sleep(Math.random() * 1000);
        while (performance.now() < end) {
          const next = performance.now() + 1000;
          await poll(token, times, statuses).catch(() => (statuses.error = (statuses.error ?? 0) + 1));
          await sleep(Math.max(0, next - performance.now()));
        }
      }),
    );
    return { times, statuses };
  });

  const stopProfile = PROFILE ? await profileGateway() : undefined;
  await measure(`saturation, ${SATURATION_CLIENTS} clients back to back`, async () => {
    const times = [];
    const statuses = {};
    const end = performance.now() + 10_000;
    await Promise.all(
      Array.from({ length: SATURATION_CLIENTS }, async (_, i) => {
        while (performance.now() < end) await poll(tokens[i % tokens.length], times, statuses).catch(() => (statuses.error = (statuses.error ?? 0) + 1));
      }),
    );
    return { times, statuses };
  });
  await stopProfile?.();
} finally {
  await sys.stop();
}
process.exit(0);
