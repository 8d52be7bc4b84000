import { describe, expect, it } from '@jest/globals';
import { backoffMs, idempotencyKeyOf } from '@bns/contracts';
import { paceMs, unlinkedRecheckMs } from '../pacing.js';

describe('pacing', () => {
  it('adds 0..jitter to the delay', () => {
    expect(paceMs(4000, 0)).toBe(4000);
    expect(paceMs(4000, 1000, () => 0)).toBe(4000);
    expect(paceMs(4000, 1000, () => 0.999999)).toBe(5000);
  });
  it('doubles the retry wait (the lane queue uses backoffMs with JOB_RETRY_BASE_MS)', () => {
    expect([1, 2, 3].map((r) => backoffMs(r, { baseMs: 2000 }))).toEqual([2000, 4000, 8000]);
  });
  it('keeps the idempotency key format the send ledgers already hold', () => {
    const jobId = '6f1c2a9e-8b1d-4c3e-9f20-3a4b5c6d7e8f';
    expect(idempotencyKeyOf(jobId, '91234567')).toBe(`${jobId}:91234567`);
  });
  it('thins out unlinked checks, capped, and stops at the deadline', () => {
    expect(unlinkedRecheckMs(0, 600_000, 15_000)).toBe(1000);
    expect(unlinkedRecheckMs(4000, 600_000, 15_000)).toBe(4000);
    expect(unlinkedRecheckMs(100_000, 600_000, 15_000)).toBe(15_000);
    expect(unlinkedRecheckMs(599_500, 600_000, 15_000)).toBe(500);
    expect(unlinkedRecheckMs(700_000, 600_000, 15_000)).toBe(0);
  });
});
