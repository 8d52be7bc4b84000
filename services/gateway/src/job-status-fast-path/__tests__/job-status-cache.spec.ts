import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobStatusCache } from '../job-status-cache.js';

/** `performance.now()` as the test sets it (from 0), for lifetimes without sleeping. */
const fakeClock = () => {
  let now = 0;
  const spy = jest.spyOn(performance, 'now').mockImplementation(() => now);
  return { at: (ms: number) => void (now = ms), restore: () => spy.mockRestore() };
};

const cache = (ttlMs = 10_000, max = 100, bytes = 1 << 20) =>
  new JobStatusCache({ JOB_STATUS_CACHE_MS: ttlMs, JOB_STATUS_CACHE_MAX: max, JOB_STATUS_CACHE_BYTES: bytes });
const body = (text: string) => Buffer.from(text);

describe("job-status cache (304s from the gateway's memory)", () => {
  it('knows a version once the jobs service answered it, for that user and job only', () => {
    const c = cache();
    expect(c.version('ann', 'job-1')).toBeUndefined();
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    expect(c.version('ann', 'job-1')).toBe('v1');
    // Another user asking for the same id, or Ann for another job: nothing known.
    expect(c.version('bob', 'job-1')).toBeUndefined();
    expect(c.version('ann', 'job-2')).toBeUndefined();
    // A newer answer replaces it.
    c.remember('ann', 'job-1', 'v2', c.ticket('ann'));
    expect(c.version('ann', 'job-1')).toBe('v2');
  });

  it('remembers a job the user does not have as missing: never a version (no 304, not even for *), only for a job id, gone on an event of the user', () => {
    const c = cache();
    const jobId = '0b6c3f0e-8a52-4d6e-9f39-3c1e2b7d9a10';
    c.rememberMissing('ann', jobId, c.ticket('ann'));
    expect(c.missing('ann', jobId)).toBe(true);
    expect(c.version('ann', jobId)).toBeUndefined();
    // Only for Ann: Bob asking for the same id is asked of the jobs service.
    expect(c.missing('bob', jobId)).toBe(false);
    // Something that is not a job id is never kept (keys stay small, whatever a client puts in the path).
    c.rememberMissing('ann', 'x'.repeat(5000), c.ticket('ann'));
    expect(c.missing('ann', 'x'.repeat(5000))).toBe(false);
    expect(c.size).toBe(1);
    // A 404 learned while an event of Ann's came is not kept; an event forgets what was kept.
    const ticket = c.ticket('ann');
    c.changed('ann');
    expect(c.missing('ann', jobId)).toBe(false);
    c.rememberMissing('ann', jobId, ticket);
    expect(c.missing('ann', jobId)).toBe(false);
    // A version answered later replaces the missing mark.
    c.rememberMissing('ann', jobId, c.ticket('ann'));
    c.remember('ann', jobId, 'v1', c.ticket('ann'));
    expect(c.missing('ann', jobId)).toBe(false);
    expect(c.version('ann', jobId)).toBe('v1');
    // Off: nothing is kept.
    const off = cache(0);
    off.rememberMissing('ann', jobId, off.ticket('ann'));
    expect(off.missing('ann', jobId)).toBe(false);
  });

  it('an event of the user forgets all their jobs, and only theirs', () => {
    const c = cache();
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    c.remember('ann', 'job-2', 'w1', c.ticket('ann'));
    c.remember('bob', 'job-3', 'x1', c.ticket('bob'));
    c.changed('ann');
    expect(c.version('ann', 'job-1')).toBeUndefined();
    expect(c.version('ann', 'job-2')).toBeUndefined();
    expect(c.version('bob', 'job-3')).toBe('x1');
    // Learned again after the event: known again.
    c.remember('ann', 'job-1', 'v2', c.ticket('ann'));
    expect(c.version('ann', 'job-1')).toBe('v2');
  });

  it('an answer read before an event of its user is not kept (it may predate the change)', () => {
    const c = cache();
    const ticket = c.ticket('ann');
    // The request is out; meanwhile the change's event arrives; then the (older) answer.
    c.changed('ann');
    c.remember('ann', 'job-1', 'v-old', ticket);
    expect(c.version('ann', 'job-1')).toBeUndefined();
    // Another user's event does not spoil Ann's answer.
    const next = c.ticket('ann');
    c.changed('bob');
    c.remember('ann', 'job-1', 'v-new', next);
    expect(c.version('ann', 'job-1')).toBe('v-new');
  });

  it("a change made through the gateway forgets the user's jobs when it is answered, and also when it fails", async () => {
    const c = cache();
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    let finish!: (v: string) => void;
    const pausing = c.changing('ann', new Promise<string>((resolve) => (finish = resolve)));
    finish('paused');
    await expect(pausing).resolves.toBe('paused');
    expect(c.version('ann', 'job-1')).toBeUndefined();

    c.remember('ann', 'job-1', 'v2', c.ticket('ann'));
    await expect(c.changing('ann', Promise.reject(new Error('timed out')))).rejects.toThrow('timed out');
    expect(c.version('ann', 'job-1')).toBeUndefined();
  });

  it('an event heard while nothing is known (not parsed, whoever it is of) spoils every answer in flight, and nothing once something is known', () => {
    const c = cache();
    const inFlight = c.ticket('ann');
    expect(c.heardWhileEmpty()).toBe(true);
    c.remember('ann', 'job-1', 'v-old', inFlight);
    expect(c.version('ann', 'job-1')).toBeUndefined();
    // Asked after it: kept. From then on the gateway must read whose each event is.
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    expect(c.version('ann', 'job-1')).toBe('v1');
    expect(c.heardWhileEmpty()).toBe(false);
    expect(c.version('ann', 'job-1')).toBe('v1');
  });

  it('a NATS reconnect (events may be lost) forgets everything, answers in flight included', () => {
    const c = cache();
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    const inFlight = c.ticket('bob');
    c.forgetAll();
    expect(c.version('ann', 'job-1')).toBeUndefined();
    c.remember('bob', 'job-2', 'x1', inFlight);
    expect(c.version('bob', 'job-2')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('an entry lives JOB_STATUS_CACHE_MS at most; 0 turns the cache off', async () => {
    const c = cache(40);
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    expect(c.version('ann', 'job-1')).toBe('v1');
    await sleep(60);
    expect(c.version('ann', 'job-1')).toBeUndefined();
    expect(c.size).toBe(0);

    const off = cache(0);
    off.remember('ann', 'job-1', 'v1', off.ticket('ann'));
    expect(off.version('ann', 'job-1')).toBeUndefined();
    expect(off.size).toBe(0);
  });

  it('entries past JOB_STATUS_CACHE_MS leave on their own, oldest first, so an idle replica is empty again (events need no reading)', async () => {
    const c = cache(40);
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    c.rememberMissing('bob', '0b6c3f0e-8a52-4d6e-9f39-3c1e2b7d9a10', c.ticket('bob'));
    expect(c.size).toBe(2);
    expect(c.heardWhileEmpty()).toBe(false);
    await sleep(60);
    // Nobody asked for them again: the next event finds nothing known.
    expect(c.heardWhileEmpty()).toBe(true);
    expect(c.size).toBe(0);
    // Learning a new entry also drops the expired ones before it, and only those.
    c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
    await sleep(60);
    c.remember('ann', 'job-2', 'v2', c.ticket('ann'));
    expect(c.size).toBe(1);
    expect(c.version('ann', 'job-2')).toBe('v2');
  });

  it('entries learned together expire over the last tenth of JOB_STATUS_CACHE_MS, not all at once', () => {
    const clock = fakeClock();
    try {
      const c = cache(10_000, 1000);
      const jobs = Array.from({ length: 200 }, (_, i) => `job-${i}`);
      for (const job of jobs) c.remember('ann', job, `v-${job}`, c.ticket('ann'));
      clock.at(8_999);
      expect(jobs.filter((j) => c.version('ann', j) === undefined)).toEqual([]);
      clock.at(9_500);
      const left = jobs.filter((j) => c.version('ann', j) !== undefined).length;
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThan(jobs.length);
      clock.at(10_000);
      expect(jobs.filter((j) => c.version('ann', j) !== undefined)).toEqual([]);
    } finally {
      clock.restore();
    }
  });

  describe('refresh ahead', () => {
    let clock: ReturnType<typeof fakeClock>;
    beforeEach(() => (clock = fakeClock()));
    afterEach(() => clock.restore());

    /** A cache of 10 s entries whose refreshes the test answers, one by one (`asked`). */
    const refreshing = (max = 100) => {
      const c = cache(10_000, max);
      const asked: {
        userId: string;
        jobId: string;
        version: string;
        answer: (version: string) => void;
        fail: (err: Error) => void;
      }[] = [];
      const refresh = (userId: string, jobId: string, version: string) =>
        new Promise<string>((answer, fail) => asked.push({ userId, jobId, version, answer, fail }));
      c.refreshWith(refresh);
      return { c, asked, refresh };
    };
    const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

    it('a poll past the refresh point is answered from memory and asks the jobs service once, behind it; the answer renews the entry', async () => {
      const { c, asked } = refreshing();
      c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
      // Before 5 s (of 10) no poll asks.
      clock.at(4_999);
      expect(c.version('ann', 'job-1')).toBe('v1');
      expect(asked).toHaveLength(0);
      // Past 8 s every entry is due: the poll is still answered from memory, and one refresh goes out.
      clock.at(8_000);
      expect(c.version('ann', 'job-1')).toBe('v1');
      expect(c.version('ann', 'job-1')).toBe('v1');
      expect(asked.map(({ userId, jobId, version }) => ({ userId, jobId, version }))).toEqual([
        { userId: 'ann', jobId: 'job-1', version: 'v1' },
      ]);
      asked[0]!.answer('v1');
      await settle();
      // Renewed: known past the first lifetime, and due again only from 5 s after the refresh.
      clock.at(12_999);
      expect(c.version('ann', 'job-1')).toBe('v1');
      expect(asked).toHaveLength(1);
      clock.at(16_000);
      expect(c.version('ann', 'job-1')).toBe('v1');
      expect(asked).toHaveLength(2);
      // The job had changed without an event: the refresh learns its new version, and the client's old one is no longer a 304.
      asked[1]!.answer('v2');
      await settle();
      expect(c.version('ann', 'job-1')).toBe('v2');
    });

    it('a refresh answer read while an event of the user came, or across a NATS reconnect, is not kept; a failed refresh leaves the entry to expire', async () => {
      const { c, asked } = refreshing();
      c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
      clock.at(8_000);
      expect(c.version('ann', 'job-1')).toBe('v1');
      c.changed('ann');
      asked[0]!.answer('v-old');
      await settle();
      expect(c.version('ann', 'job-1')).toBeUndefined();

      c.remember('ann', 'job-1', 'v2', c.ticket('ann'));
      clock.at(16_000);
      expect(c.version('ann', 'job-1')).toBe('v2');
      asked[1]!.fail(new Error('jobs service timed out'));
      await settle();
      // Still the entry it was (not asked again while it lives), gone at its expiry: the next poll asks inline.
      expect(c.version('ann', 'job-1')).toBe('v2');
      expect(asked).toHaveLength(2);
      clock.at(18_000);
      expect(c.version('ann', 'job-1')).toBeUndefined();

      // A NATS reconnect (events may have been missed) while a refresh is out: its answer is not kept either.
      c.remember('ann', 'job-1', 'v3', c.ticket('ann'));
      clock.at(26_000);
      expect(c.version('ann', 'job-1')).toBe('v3');
      expect(asked).toHaveLength(3);
      c.forgetAll();
      asked[2]!.answer('v3');
      await settle();
      expect(c.version('ann', 'job-1')).toBeUndefined();
      expect(c.size).toBe(0);
    });

    it(`at most ${64} refreshes are out at once; a job the user does not have is never refreshed; off, nothing is`, async () => {
      const { c, asked, refresh } = refreshing(1000);
      const jobs = Array.from({ length: 100 }, (_, i) => `job-${i}`);
      for (const job of jobs) c.remember('ann', job, `v-${job}`, c.ticket('ann'));
      const missing = '0b6c3f0e-8a52-4d6e-9f39-3c1e2b7d9a10';
      c.rememberMissing('ann', missing, c.ticket('ann'));
      clock.at(8_000);
      expect(jobs.map((j) => c.version('ann', j))).toEqual(jobs.map((j) => `v-${j}`));
      expect(c.missing('ann', missing)).toBe(true);
      expect(asked).toHaveLength(64);
      // One answered: the next due entry polled goes out.
      asked[0]!.answer(asked[0]!.version);
      await settle();
      expect(c.version('ann', 'job-99')).toBe('v-job-99');
      expect(asked.map((a) => a.jobId)).toContain('job-99');
      expect(asked).toHaveLength(65);
      expect(asked.some((a) => a.jobId === missing)).toBe(false);

      const off = cache(0);
      off.refreshWith(refresh);
      off.remember('ann', 'job-1', 'v1', off.ticket('ann'));
      expect(off.version('ann', 'job-1')).toBeUndefined();
      expect(asked).toHaveLength(65);
    });
  });

  it('keeps JOB_STATUS_CACHE_MAX entries, dropping the oldest learned', () => {
    const c = cache(10_000, 3);
    for (const job of ['a', 'b', 'c', 'd']) c.remember('ann', job, `v-${job}`, c.ticket('ann'));
    expect(c.size).toBe(3);
    expect(c.version('ann', 'a')).toBeUndefined();
    expect(['b', 'c', 'd'].map((j) => c.version('ann', j))).toEqual(['v-b', 'v-c', 'v-d']);
  });

  describe('whole answers (200s from memory)', () => {
    it('keeps the answer of a version for that user and job; a 304 refresh of the same version keeps it, another version drops it', () => {
      const c = cache();
      c.remember('ann', 'job-1', 'v1', c.ticket('ann'), body('{"a":1}'));
      expect(c.answer('ann', 'job-1')).toEqual({ version: 'v1', body: body('{"a":1}') });
      expect(c.answer('bob', 'job-1')).toBeUndefined();
      expect(c.answer('ann', 'job-2')).toBeUndefined();
      // The jobs service said v1 is still current (a revalidation, no body): the answer stays.
      c.remember('ann', 'job-1', 'v1', c.ticket('ann'));
      expect(c.answer('ann', 'job-1')?.body.toString()).toBe('{"a":1}');
      // A newer version without its body: the old answer is not served for it.
      c.remember('ann', 'job-1', 'v2', c.ticket('ann'));
      expect(c.version('ann', 'job-1')).toBe('v2');
      expect(c.answer('ann', 'job-1')).toBeUndefined();
      expect(c.answerBytes).toBe(0);
    });

    it("an event of the user, a read that raced one, a reconnect or the lifetime's end: no answer from memory", () => {
      const clock = fakeClock();
      try {
        const c = cache(10_000);
        c.remember('ann', 'job-1', 'v1', c.ticket('ann'), body('x'));
        c.changed('ann');
        expect(c.answer('ann', 'job-1')).toBeUndefined();
        const ticket = c.ticket('ann');
        c.changed('ann');
        c.remember('ann', 'job-1', 'v1', ticket, body('x'));
        expect(c.answer('ann', 'job-1')).toBeUndefined();
        c.remember('ann', 'job-1', 'v1', c.ticket('ann'), body('x'));
        c.forgetAll();
        expect(c.answer('ann', 'job-1')).toBeUndefined();
        expect(c.answerBytes).toBe(0);
        c.remember('ann', 'job-1', 'v1', c.ticket('ann'), body('x'));
        clock.at(10_001);
        expect(c.answer('ann', 'job-1')).toBeUndefined();
        expect(c.answerBytes).toBe(0);
      } finally {
        clock.restore();
      }
    });

    it('holds JOB_STATUS_CACHE_BYTES at most: the oldest answers go first (their versions stay); one over a sixteenth is never kept; 0 keeps none', () => {
      const c = cache(10_000, 100, 1600);
      for (const job of ['a', 'b', 'c', 'd', 'e', 'f'])
        c.remember('ann', job, `v-${job}`, c.ticket('ann'), body('x'.repeat(100)));
      expect(c.answerBytes).toBe(600);
      for (let i = 0; i < 12; i++) c.remember('ann', `n${i}`, `v${i}`, c.ticket('ann'), body('y'.repeat(100)));
      expect(c.answerBytes).toBeLessThanOrEqual(1600);
      expect(c.answer('ann', 'a')).toBeUndefined();
      expect(c.version('ann', 'a')).toBe('v-a');
      expect(c.answer('ann', 'n11')?.version).toBe('v11');
      c.remember('ann', 'big', 'vb', c.ticket('ann'), body('z'.repeat(101)));
      expect(c.answer('ann', 'big')).toBeUndefined();
      expect(c.version('ann', 'big')).toBe('vb');
      const off = cache(10_000, 100, 0);
      off.remember('ann', 'job-1', 'v1', off.ticket('ann'), body('x'));
      expect(off.answer('ann', 'job-1')).toBeUndefined();
      expect(off.version('ann', 'job-1')).toBe('v1');
    });

    it('an entry dropped for JOB_STATUS_CACHE_MAX counts its answer out', () => {
      const c = cache(10_000, 2);
      for (const job of ['a', 'b', 'c']) c.remember('ann', job, `v-${job}`, c.ticket('ann'), body('x'.repeat(10)));
      expect(c.size).toBe(2);
      expect(c.answerBytes).toBe(20);
    });
  });
});
