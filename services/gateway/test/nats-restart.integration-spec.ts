import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api, devSignIn, sleep, startSystem, waitFor, type Nats, type System } from '@bns/testing';
import { RestartableNats } from '../../../libs/testing/dist/faults.js';

/** How soon after NATS is back requests must be as fast as before. */
const RECOVERY_MS = 3000;

/**
 * A NATS kill -9 and restart, on the same store and on an empty one, as ops would do it: requests
 * are back to their earlier speed within seconds, not held by the rate limiter's store (a bucket
 * lost with the broker), and a large start (staged in the object store) still goes through.
 */
describe('gateway across a NATS kill -9 and restart', () => {
  let nats: RestartableNats;
  let sys: System;
  const logs: string[] = [];
  const users: { userId: string; token: string }[] = [];

  /** Over the staging threshold: the body goes through the object store. */
  const largeStart = (u: { userId: string; token: string }) => {
    const phoneNumbers = Array.from({ length: 30_000 }, (_, i) => `5${String(1000000 + i).padStart(7, '0')}`);
    return api(sys.gateway.url, u.token).post('/start-bulk-messages', {
      userId: u.userId,
      message: 'Hello',
      phoneNumbers,
    });
  };
  const dashboard = async (u: { userId: string; token: string }) => {
    const t = performance.now();
    const res = await api(sys.gateway.url, u.token).get(`/api/dashboard/${u.userId}`);
    return { status: res.status, ms: performance.now() - t };
  };
  /** p99 (the slowest but for one in a hundred) of `n` sequential calls, each expected 200. */
  const p99 = async (u: { userId: string; token: string }, n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = await dashboard(u);
      expect(r.status).toBe(200);
      times.push(r.ms);
      await sleep(40);
    }
    times.sort((a, b) => a - b);
    return times[Math.min(times.length - 1, Math.ceil(times.length * 0.99) - 1)];
  };

  beforeAll(async () => {
    nats = await RestartableNats.start();
    const handle = { url: nats.url, port: nats.port, stop: async () => undefined } as unknown as Nats;
    sys = await startSystem({
      shards: 1,
      nats: handle,
      env: { LOG_LEVEL: 'info' },
      onLine: (label, line) => label === 'gateway' && logs.push(line),
    });
    for (const email of ['nats-a@example.com', 'nats-b@example.com', 'nats-c@example.com'])
      users.push(await devSignIn(sys.gateway.url, email));
    // The gateway has staged a body before the restarts (it holds the object store's bucket).
    expect((await largeStart(users[2])).status).toBeLessThan(500);
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
    await nats?.destroy();
  });

  it.each([
    ['the same store', false, 1],
    ['an empty store', true, 2],
  ])(
    'answers at its earlier p99 within 3 s of a restart on %s',
    async (_what, empty, fresh) => {
      const [known] = users;
      await p99(known, 20); // warm
      // 100 calls each, so one pause of a loaded machine (a collection, another process) is the one
      // in a hundred the p99 leaves out; a request held by the store waits a whole time-out.
      const before = await p99(known, 100);

      await nats.kill9();
      await sleep(500);
      await nats.up({ empty });
      const back = Date.now();
      // Until the services' subscriptions are back a request may be refused; none may be held.
      await waitFor(
        async () => (await dashboard(known)).status === 200,
        RECOVERY_MS,
        50,
        'a first 200 after the restart',
      );
      const wait = RECOVERY_MS - (Date.now() - back);
      if (wait > 0) await sleep(wait);
      // The user seen before, and one this replica has never limited (its first store read comes now).
      const after = await p99(known, 100);
      const newcomer = await p99(users[fresh], 100);
      // A request held by the store waits at least its 200 ms time-out; a loaded machine's p99 of a
      // hundred calls moves by tens of milliseconds from one hundred to the next (31.2 against 13.5
      // seen in CI), so the bound sits well above that and well below a time-out.
      const bound = Math.max(2 * before, 60);
      expect(after).toBeLessThanOrEqual(bound);
      expect(newcomer).toBeLessThanOrEqual(bound);
      process.stdout.write(
        `NATS restart on ${_what}: p99 before ${before.toFixed(1)} ms, after ${after.toFixed(1)} ms, new user ${newcomer.toFixed(1)} ms\n`,
      );
    },
    120_000,
  );

  it('said in its log that the rate limit fell back to its own buckets, and that the shared store answers again', () => {
    expect(logs.some((l) => l.includes('rate-limit store (NATS KV) is not answering'))).toBe(true);
    expect(logs.some((l) => l.includes('rate-limit store (NATS KV) answers again'))).toBe(true);
  });

  it('still stages a large start after the object store bucket was lost with the broker', async () => {
    const res = await largeStart(users[2]);
    // Not linked to WhatsApp: refused by the jobs service with its reason, which it could only give after reading the staged body.
    expect(res.status).not.toBe(503);
    expect(res.status).toBeLessThan(500);
  });
});
