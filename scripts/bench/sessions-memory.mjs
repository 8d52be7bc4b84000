#!/usr/bin/env node
// Memory per linked simulated WhatsApp session: one sessions shard links N users (default 1000) and
// the script prints the shard's RSS growth divided by N. Real Postgres and NATS, the built service
// (build first: npx tsc -p services/sessions/tsconfig.build.json).
//   node scripts/bench/sessions-memory.mjs [users]
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connectNats, RpcClient } from '@bns/service-kit';
import { sleep, startNats, startPostgres, startService } from '@bns/testing';

const USERS = Number(process.argv[2] ?? 1000);
const CONCURRENCY = 20;

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const mib = (kib) => (kib / 1024).toFixed(1);

const [pg, nats] = await Promise.all([startPostgres(), startNats()]);
let shard;
let nc;
try {
  shard = await startService('sessions', {
    env: {
      NATS_URL: nats.url,
      DATABASE_URL: pg.url,
      SESSIONS_SHARDS: '1',
      SHARD_INDEX: '0',
      WA_ENGINE: 'simulated',
      SIM_READY_DELAY_MS: '0',
      AUTO_LOGIN_PREF_TIMEOUT_MS: '200',
      // Every link's login is sealed under it (each simulated link stores one).
      SESSION_STATE_KEY: randomBytes(32).toString('base64'),
    },
  });
  nc = await connectNats(nats.url, 'bench-sessions-memory');
  const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 30_000 });
  const pid = shard.process.pid;

  // Warm the process up (JIT, pools, first queries) with a user that is linked and then cleaned up.
  await rpc.call('sessions.connect', { userId: 'warmup', explicit: true });
  await rpc.call('sessions.simulator.scan', { userId: 'warmup' });
  await sleep(500);
  await rpc.call('sessions.logout', { userId: 'warmup' });
  await sleep(2000);
  const before = rssKiB(pid);

  const started = Date.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < USERS; i = next++) {
      const userId = `user_bench_${i}`;
      await rpc.call('sessions.connect', { userId, explicit: true });
      await rpc.call('sessions.simulator.scan', { userId });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // Every link ready, every auto-login message sent and its acks delivered.
  for (;;) {
    const states = await Promise.all(
      Array.from({ length: USERS }, (_, i) => rpc.call('sessions.status', { userId: `user_bench_${i}` })),
    );
    if (states.every((s) => s.state === 'exist')) break;
    await sleep(200);
  }
  const linkSeconds = (Date.now() - started) / 1000;
  await sleep(5000);
  const after = rssKiB(pid);

  const perSessionKiB = (after - before) / USERS;
  console.log(`linked ${USERS} simulated sessions on one shard in ${linkSeconds.toFixed(1)} s`);
  console.log(`sessions RSS: before ${mib(before)} MiB, after ${mib(after)} MiB, delta ${mib(after - before)} MiB`);
  console.log(`memory per linked session: ${perSessionKiB.toFixed(1)} KiB (RSS delta / ${USERS})`);
} finally {
  await nc?.drain().catch(() => undefined);
  await shard?.stop();
  await Promise.all([nats.stop(), pg.stop()]);
}
