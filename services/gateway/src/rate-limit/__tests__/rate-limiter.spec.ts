import { describe, expect, it } from '@jest/globals';
import { RateLimiter } from '../rate-limiter.js';

describe('RateLimiter', () => {
  it('allows the burst, then refuses with a wait, then refills at the rate', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([1, 2, 3].map(() => limiter.take('u').allowed)).toEqual([true, true, true]);
    expect(limiter.take('u')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one token back at 2/s
    expect(limiter.take('u').allowed).toBe(true);
    expect(limiter.take('u').allowed).toBe(false);
  });

  it('keeps users apart and forgets idle full buckets', () => {
    let now = 0;
    const limiter = new RateLimiter(1, 1, () => now);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
    now += 10_000;
    limiter.sweep();
    expect(limiter.size).toBe(0);
  });
});
