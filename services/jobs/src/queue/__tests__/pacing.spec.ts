import { describe, expect, it } from '@jest/globals';
import { backoffMs, idempotencyKeyOf, type SendingPolicy } from '@bns/contracts';
import { gatherWaitMs, paceMs, runAfterSend, unlinkedRecheckMs } from '../pacing.js';

describe('pacing', () => {
  it('lets a step wait for company only well ahead of its slot: never past half the lead, never when due now', () => {
    // Taken a whole lead (250 ms) before its slot: the full JOBS_STEP_GATHER_MS.
    expect(gatherWaitMs(250, 250, 20)).toBe(20);
    // Taken late: only up to half the lead before the slot.
    expect(gatherWaitMs(135, 250, 20)).toBe(10);
    expect(gatherWaitMs(100, 250, 20)).toBe(0);
    // Due now, overdue, no lead, or gathering off.
    expect(gatherWaitMs(0, 250, 20)).toBe(0);
    expect(gatherWaitMs(-50, 250, 20)).toBe(0);
    expect(gatherWaitMs(0, 0, 20)).toBe(0);
    expect(gatherWaitMs(250, 250, 0)).toBe(0);
    // The record of a sent message whose next slot is a 4 s pace away (less the lead): the full wait.
    expect(gatherWaitMs(4000 - 250, 250, 20)).toBe(20);
  });
  it("counts a run of messages and follows its last with the policy's long pause", () => {
    const policy = { pauseEvery: 3, pauseMs: 60_000 } as SendingPolicy;
    expect(runAfterSend(policy, 0)).toEqual({ runCount: 1, pauseMs: 0 });
    expect(runAfterSend(policy, 1)).toEqual({ runCount: 2, pauseMs: 0 });
    expect(runAfterSend(policy, 2)).toEqual({ runCount: 0, pauseMs: 60_000 });
    // A run already past a lowered pauseEvery ends at its next message.
    expect(runAfterSend(policy, 7)).toEqual({ runCount: 0, pauseMs: 60_000 });
    // No pause configured: the run only counts.
    expect(runAfterSend({ pauseEvery: null, pauseMs: null } as unknown as SendingPolicy, 41)).toEqual({
      runCount: 42,
      pauseMs: 0,
    });
  });
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
