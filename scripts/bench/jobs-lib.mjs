// Shared pieces of the jobs benchmarks: the system (sessions shards + jobs + gateway on a private
// Postgres and NATS), linked users, and counters fed by the events jobs publishes.
import { readFileSync } from 'node:fs';
import { connectNats, RpcClient } from '@bns/service-kit';
import { api, devSignIn, sleep, startSystem, waitFor } from '@bns/testing';

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

export async function startBench(jobsEnv = {}) {
  const sys = await startSystem({
    shards: SHARDS,
    services: ['sessions', 'jobs'],
    env: { SIM_READY_DELAY_MS: '0', SIM_QR_INTERVAL_MS: '20000', AUTO_LOGIN_PREF_TIMEOUT_MS: '100', LOG_LEVEL: 'warn' },
    serviceEnv: {
      jobs: jobsEnv,
      // Benchmarks sign in and poll for many users from one address.
      gateway: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
    },
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
    },
  };
}

/** Signs in `n` users through the gateway and links each one's simulated WhatsApp. */
export async function linkedUsers(bench, n, prefix, concurrency = 20) {
  const gateway = bench.sys.gateway.url;
  const users = await pool(n, concurrency, async (i) => {
    const session = await devSignIn(gateway, `${prefix}-${i}@bench.example`);
    await bench.rpc.call('sessions.connect', { userId: session.userId, explicit: true });
    await bench.rpc.call('sessions.simulator.scan', { userId: session.userId });
    return { ...session, client: api(gateway, session.token) };
  });
  await waitFor(
    async () => {
      const states = await pool(users.length, 50, (i) => bench.rpc.call('sessions.status', { userId: users[i].userId }));
      return states.every((s) => s.state === 'ready' || s.state === 'exist');
    },
    120_000,
    500,
    'every link ready',
  );
  return users;
}

/** Counts `events.message.status` sent/failed per job as they arrive on NATS (core subscription). */
export function countResults(nc) {
  const perJob = new Map();
  let total = 0;
  const sub = nc.subscribe('events.message.status', {
    callback: (err, msg) => {
      if (err) return;
      const e = msg.json();
      if (e.status !== 'sent' && e.status !== 'failed') return;
      perJob.set(e.jobId, (perJob.get(e.jobId) ?? 0) + 1);
      total++;
    },
  });
  return {
    get total() {
      return total;
    },
    of: (jobId) => perJob.get(jobId) ?? 0,
    stop: () => sub.unsubscribe(),
  };
}

export async function startJob(user, body) {
  const res = await user.client.post('/start-bulk-messages', { clerkUserId: user.userId, ...body });
  if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}

export const numbers = (n, from = 60_000_000) => Array.from({ length: n }, (_, i) => String(from + i));
export { sleep, waitFor };
