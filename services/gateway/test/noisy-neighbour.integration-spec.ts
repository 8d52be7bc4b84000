import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request } from 'node:http';
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

    let bursting = true;
    let waves = 0;
    const noisyAnswers: Awaited<ReturnType<typeof call>>[] = [];
    // 400 requests at once, and again as soon as they are answered, for as long as the others run.
    const burst = (async () => {
      while (bursting) {
        noisyAnswers.push(...(await Promise.all(Array.from({ length: BURST }, () => call(noisy)))));
        waves++;
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    const busy = await quietRound();
    bursting = false;
    await burst;

    const busyP99 = p99(busy.map((r) => r.ms));
    process.stdout.write(
      `noisy neighbour: others' p99 quiet ${calmP99.toFixed(1)} ms, during the burst ${busyP99.toFixed(1)} ms; the noisy user's ${waves} waves of ${BURST}: ` +
        `${noisyAnswers.filter((r) => r.status === 200).length} × 200, ${noisyAnswers.filter((r) => r.status === 429).length} × 429, ${noisyAnswers.filter((r) => r.status === 503).length} × 503\n`,
    );
    expect(busy.map((r) => r.status)).toEqual(busy.map(() => 200));
    expect(busyP99).toBeLessThanOrEqual(Math.max(3 * calmP99, 30));
    // The burst was refused to its sender in so many words, with when to come back.
    const refused = noisyAnswers.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.status === 429 && r.retryAfter !== undefined)).toBe(true);
  }, 180_000);
});
