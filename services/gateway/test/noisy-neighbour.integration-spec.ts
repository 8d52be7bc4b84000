import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request } from 'node:http';
import { Worker } from 'node:worker_threads';
import { devSignIn, startSystem, type DevSession, type System } from '@bns/testing';

const BURST = 400;
const QUIET_USERS = 5;
const SEQUENTIAL = 10;

/**
 * One user's burst is refused to that user (429 + Retry-After), never shed onto the others: while one
 * user sends 400 requests at once, wave after wave, five others making plain requests one after another
 * all get their answers, about as fast as on a quiet system.
 */
describe('a noisy neighbour', () => {
  let sys: System;
  let noisy: DevSession;
  const quiet: DevSession[] = [];
  // Enough sockets for the whole burst at once, as 400 clients would have.
  const agent = new Agent({ keepAlive: true, maxSockets: BURST + 50 });

  const call = (u: DevSession) =>
    new Promise<{ status: number; retryAfter: string | undefined; ms: number }>((resolve, reject) => {
      const t = performance.now();
      const req = request(
        `${sys.gateway.url}/api/dashboard/${u.userId}`,
        { agent, headers: { authorization: `Bearer ${u.token}` } },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], ms: performance.now() - t }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  /** Each quiet user, one request after another; all their answers. */
  const quietRound = () =>
    Promise.all(
      quiet.map(async (u) => {
        const out: Awaited<ReturnType<typeof call>>[] = [];
        for (let i = 0; i < SEQUENTIAL; i++) out.push(await call(u));
        return out;
      }),
    ).then((all) => all.flat());
  const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.ceil(ms.length * 0.99) - 1];

  beforeAll(async () => {
    sys = await startSystem({ shards: 1 });
    noisy = await devSignIn(sys.gateway.url, 'noisy@example.com');
    for (let i = 0; i < QUIET_USERS; i++) quiet.push(await devSignIn(sys.gateway.url, `quiet-${i}@example.com`));
  }, 180_000);
  afterAll(async () => {
    agent.destroy();
    await sys?.stop();
  });

  it('answers the others without an error and within 3× their quiet p99 while one user sends waves of 400 requests at once', async () => {
    await quietRound(); // warm
    const calm = await quietRound();
    expect(calm.every((r) => r.status === 200)).toBe(true);
    const calmP99 = p99(calm.map((r) => r.ms));

    // The noisy user is another client: its 400 requests at once, wave after wave, come from a thread of
    // their own, so the time measured for the quiet users is the gateway's, not this thread's queue.
    const burst = noisyBurst(`${sys.gateway.url}/api/dashboard/${noisy.userId}`, noisy.token);
    await new Promise((r) => setTimeout(r, 20));
    const busy = await quietRound();
    const { waves, statuses, refusedWithoutRetryAfter } = await burst.stop();
    const busyP99 = p99(busy.map((r) => r.ms));
    const count = (status: number) => statuses.filter((st) => st === status).length;
    process.stdout.write(
      `noisy neighbour: others' p99 quiet ${calmP99.toFixed(1)} ms, during the burst ${busyP99.toFixed(1)} ms; the noisy user's ${waves} waves of ${BURST}: ` +
        `${count(200)} × 200, ${count(429)} × 429, ${count(503)} × 503\n`,
    );
    expect(busy.map((r) => r.status)).toEqual(busy.map(() => 200));
    // Each wave is 400 requests the one event loop must read and answer (a 429 costs about 0.15 ms on
    // two shared cores), so a quiet request that arrives with a wave waits behind it, whoever sent it:
    // up to 3× the quiet p99, or the 100 ms a wave can take on a loaded two-core machine, and no longer.
    expect(busyP99).toBeLessThanOrEqual(Math.max(3 * calmP99, 100));
    // The burst was refused to its sender in so many words, with when to come back.
    const refused = statuses.filter((st) => st !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((st) => st === 429)).toBe(true);
    expect(refusedWithoutRetryAfter).toBe(0);
  }, 180_000);
});

/** The body of the noisy client's thread: waves of BURST requests at once until told to stop. */
const NOISY_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:http');
const { url, token, burst } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: burst + 50 });
const statuses = [];
let refusedWithoutRetryAfter = 0;
let waves = 0;
let stopping = false;
parentPort.on('message', () => { stopping = true; });
const call = () => new Promise((resolve) => {
  const req = request(url, { agent, headers: { authorization: 'Bearer ' + token } }, (res) => {
    res.resume();
    res.on('end', () => {
      statuses.push(res.statusCode);
      if (res.statusCode !== 200 && res.headers['retry-after'] === undefined) refusedWithoutRetryAfter++;
      resolve();
    });
  });
  req.on('error', () => { statuses.push(0); resolve(); });
  req.end();
});
(async () => {
  while (!stopping) {
    await Promise.all(Array.from({ length: burst }, call));
    waves++;
  }
  agent.destroy();
  parentPort.postMessage({ waves, statuses, refusedWithoutRetryAfter });
})();
`;

function noisyBurst(url: string, token: string) {
  const worker = new Worker(NOISY_CLIENT, { eval: true, workerData: { url, token, burst: BURST } });
  const done = new Promise<{ waves: number; statuses: number[]; refusedWithoutRetryAfter: number }>(
    (resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    },
  );
  return {
    stop: async () => {
      worker.postMessage('stop');
      const result = await done;
      await worker.terminate();
      return result;
    },
  };
}
