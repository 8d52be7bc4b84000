import { describe, expect, it } from '@jest/globals';
import { paceMs, retryDelayMs, unlinkedRecheckMs } from '../pacing.js';

describe('pacing', () => {
  it('adds 0..jitter to the delay', () => {
    expect(paceMs(4000, 0)).toBe(4000);
    expect(paceMs(4000, 1000, () => 0)).toBe(4000);
    expect(paceMs(4000, 1000, () => 0.999999)).toBe(5000);
  });
  it('doubles the retry wait', () => {
    expect([1, 2, 3].map((r) => retryDelayMs(r, 2000))).toEqual([2000, 4000, 8000]);
  });
  it('thins out unlinked checks, capped, and stops at the deadline', () => {
    expect(unlinkedRecheckMs(0, 600_000, 15_000)).toBe(1000);
    expect(unlinkedRecheckMs(4000, 600_000, 15_000)).toBe(4000);
    expect(unlinkedRecheckMs(100_000, 600_000, 15_000)).toBe(15_000);
    expect(unlinkedRecheckMs(599_500, 600_000, 15_000)).toBe(500);
    expect(unlinkedRecheckMs(700_000, 600_000, 15_000)).toBe(0);
  });
});
