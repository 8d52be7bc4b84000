import { describe, expect, it } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import type { KV } from '@nats-io/kv';
import type { Msg, MsgHdrs } from '@nats-io/transport-node';
import type { RpcClient } from '@bns/service-kit';
import { RateLimitGuard } from '../rate-limit.guard.js';
import {
  kvStore,
  RevisionMoved,
  SharedRateLimiter,
  STORE_RETRY_MS,
  STORE_TIMEOUT_MS,
  type LimitStore,
} from '../shared-rate-limiter.js';

/**
 * A store in memory with the compare-and-set the limiter relies on; `writes` counts round trips. With
 * `slow`, a read or write answers a few turns later, as a round trip does, so concurrent ones overlap.
 */
function memoryStore(slow = false) {
  const values = new Map<string, { value: string; revision: number }>();
  let revision = 0;
  const later = () => (slow ? new Promise((resolve) => setTimeout(resolve, Math.random() * 3)) : undefined);
  const store = {
    writes: 0,
    async read(key: string) {
      await later();
      return values.get(key);
    },
    async write(key: string, value: string, last: number) {
      store.writes++;
      await later();
      if ((values.get(key)?.revision ?? 0) !== last) throw new RevisionMoved('wrong last sequence');
      values.set(key, { value, revision: ++revision });
      return revision;
    },
  };
  return store;
}

const limiter = (store: LimitStore, perSecond: number, burst: number, lease: number, now: () => number) =>
  new SharedRateLimiter(store, perSecond, burst, lease, now);

const poll = (userId: string) =>
  ({
    getType: () => 'http',
    switchToHttp: () => ({ getRequest: () => ({ path: '/job-status/j1', user: { userId } }) }),
  }) as unknown as ExecutionContext;

describe('RateLimitGuard', () => {
  it('decides a request leased earlier in the same turn, and goes to the shared store for the next lease', async () => {
    const kv = memoryStore();
    const guard = new RateLimitGuard(limiter(kv, 10, 20, 3, () => 0));
    const first = guard.canActivate(poll('user_a'));
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(true);
    expect([guard.canActivate(poll('user_a')), guard.canActivate(poll('user_a'))]).toEqual([true, true]);
    expect(kv.writes).toBe(1);
    const fourth = guard.canActivate(poll('user_a'));
    expect(fourth).toBeInstanceOf(Promise);
    expect(await fourth).toBe(true);
    expect(kv.writes).toBe(2);
    // Leases are per user.
    expect(guard.canActivate(poll('user_b'))).toBeInstanceOf(Promise);
  });

  it('refuses past the burst with 429 and the wait, leases or not', async () => {
    let now = 0;
    const guard = new RateLimitGuard(limiter(memoryStore(), 1, 2, 2, () => now));
    expect(await guard.canActivate(poll('user_a'))).toBe(true);
    expect(guard.canActivate(poll('user_a'))).toBe(true);
    await expect(guard.canActivate(poll('user_a'))).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      extra: { details: { retryAfterSeconds: 1 } },
    });
    now += 1000;
    expect(await guard.canActivate(poll('user_a'))).toBe(true);
  });

  it('shares the budget between replicas: a write on a revision another replica moved on reads and tries again', async () => {
    const store = memoryStore();
    const [one, two] = [
      new RateLimitGuard(limiter(store, 1, 3, 1, () => 0)),
      new RateLimitGuard(limiter(store, 1, 3, 1, () => 0)),
    ];
    expect(await one.canActivate(poll('user_a'))).toBe(true); // one knows revision 1
    expect(await two.canActivate(poll('user_a'))).toBe(true); // two reads it, writes revision 2
    expect(await one.canActivate(poll('user_a'))).toBe(true); // one's revision is stale: read, write 3
    // two's revision is stale too: its write fails, the read shows the burst spent.
    await expect(two.canActivate(poll('user_a'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(store.writes).toBe(5);
  });

  it('lets through no more than the burst to concurrent requests of one user, on one replica or two', async () => {
    // 200 at once on one replica: one store update at a time, the others spend its lease.
    const store = memoryStore(true);
    const one = limiter(store, 1, 10, 3, () => 0);
    const verdicts = await Promise.all(Array.from({ length: 200 }, () => one.take('user-a')));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(10);
    expect(store.writes).toBeLessThanOrEqual(4);
    // Two replicas racing on one value: conflicts are retried or refused, never let through on a bucket of their own.
    const shared = memoryStore(true);
    const [a, b] = [limiter(shared, 1, 10, 3, () => 0), limiter(shared, 1, 10, 3, () => 0)];
    const both = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).take('user-b')));
    expect(both.filter((v) => v.allowed).length).toBeLessThanOrEqual(10);
    expect(both.filter((v) => v.allowed).length).toBeGreaterThan(0);
  });

  it('decides on its own bucket only when the store cannot answer, not when another writer was first', async () => {
    const down: LimitStore = {
      read: async () => undefined,
      write: async () => {
        throw new Error('TIMEOUT');
      },
    };
    const alone = limiter(down, 1, 2, 1, () => 0);
    expect(
      (await Promise.all([alone.take('user-a'), alone.take('user-a'), alone.take('user-a')])).map((v) => v.allowed),
    ).toEqual([true, true, false]);
  });

  it('once the store failed to answer, concurrent requests go to the local bucket at once, not one store try after another', async () => {
    let reads = 0;
    const away: LimitStore = {
      read: async () => {
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('TIMEOUT');
      },
      write: async () => 0,
    };
    const replica = limiter(away, 1, 50, 5, () => 0);
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => replica.take('user-a')));
    expect(verdicts.every((v) => v.allowed)).toBe(true);
    expect(reads).toBe(1);
    // Later requests never touch the store while it is away: the background retry does.
    await replica.take('user-a');
    expect(reads).toBe(1);
    expect(replica.storeAnswers).toBe(false);
  });

  it('never holds a request longer than the store time-out when the store hangs, and takes it back once a retry finds it answering', async () => {
    let hanging = true;
    let recovered = 0;
    const inner = memoryStore();
    const hangs: LimitStore = {
      read: (key) => (hanging ? new Promise(() => undefined) : inner.read(key)),
      write: (key, value, last) => (hanging ? new Promise(() => undefined) : inner.write(key, value, last)),
      recover: async () => {
        if (hanging) throw new Error('stream not found');
        recovered++;
      },
    };
    const replica = limiter(hangs, 1, 50, 1, () => 0);
    // A timer of the store time-out, set just before the request, is the clock: on a loaded machine
    // every timer fires late, so the request is held to that timer's moment, not to a wall-clock figure.
    const timeoutFired = new Promise<number>((resolve) =>
      setTimeout(() => resolve(performance.now()), STORE_TIMEOUT_MS),
    );
    const first = replica.take('user-a').then((decision) => ({ decision, at: performance.now() }));
    const [firedAt, answered] = await Promise.all([timeoutFired, first]);
    expect(answered.decision.allowed).toBe(true);
    expect(answered.at - firedAt).toBeLessThan(50);
    const t = performance.now();
    for (let i = 0; i < 20; i++) expect((await replica.take('user-a')).allowed).toBe(true);
    // Decided locally: no request waited for the store again (one wait would be a whole time-out).
    expect(performance.now() - t).toBeLessThan(STORE_TIMEOUT_MS);
    hanging = false;
    await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS * 3 + STORE_TIMEOUT_MS));
    expect(replica.storeAnswers).toBe(true);
    expect(recovered).toBe(1);
    const before = inner.writes;
    expect((await replica.take('user-a')).allowed).toBe(true);
    expect(inner.writes).toBe(before + 1);
  });
});

describe('kvStore', () => {
  /** JetStream as the store sees it: `answer` is its reply to a publish. */
  function store(answer: object) {
    const sent: { subject: string; body: string; expected: string | undefined }[] = [];
    const rpc = {
      requestMessage: async (subject: string, body: string, options: { headers?: MsgHdrs }) => {
        sent.push({ subject, body, expected: options.headers?.get('Nats-Expected-Last-Subject-Sequence') });
        return { json: () => answer } as unknown as Msg;
      },
    };
    return { sent, kv: kvStore({} as KV, rpc as unknown as RpcClient, 'limits') };
  }

  it('writes as the KV client does: a publish on the key naming the revision it replaces; the new one is the ack', async () => {
    const { sent, kv } = store({ stream: 'KV_limits', seq: 7 });
    expect(await kv.write('user-a', '1234', 6)).toBe(7);
    expect(sent).toEqual([{ subject: '$KV.limits.user-a', body: '1234', expected: '6' }]);
  });

  it("takes JetStream's refusal for one, though it carries a seq of 0", async () => {
    const { kv } = store({
      error: { code: 400, err_code: 10071, description: 'wrong last sequence: 5' },
      stream: 'KV_limits',
      seq: 0,
    });
    await expect(kv.write('user-a', '1234', 4)).rejects.toThrow(RevisionMoved);
    await expect(kv.write('user-a', '1234', 4)).rejects.toThrow('wrong last sequence: 5');
  });

  it('tells any other refusal from a revision that moved on', async () => {
    const { kv } = store({
      error: { code: 503, err_code: 10077, description: 'maximum messages exceeded' },
      stream: 'KV_limits',
      seq: 0,
    });
    await expect(kv.write('user-a', '1234', 4)).rejects.toThrow('maximum messages exceeded');
    await expect(kv.write('user-a', '1234', 4)).rejects.not.toThrow(RevisionMoved);
  });
});
