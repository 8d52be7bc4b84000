import type { SendingPolicy } from '@bns/contracts';

/** Timing rules of the queue, pure so they can be tested without a clock. */

/** The pause after a send: the configured delay plus 0..jitter at random. */
export function paceMs(delayMs: number, jitterMs: number, random: () => number = Math.random): number {
  return delayMs + (jitterMs > 0 ? Math.floor(random() * (jitterMs + 1)) : 0);
}

/**
 * The policy's long pause after a run of messages: the run's count after one more message (back to 0
 * when the run is complete), and the pause that message is followed by (0 within a run).
 */
export function runAfterSend(policy: SendingPolicy, runCount: number): { runCount: number; pauseMs: number } {
  const next = runCount + 1;
  if (policy.pauseEvery && policy.pauseMs && next >= policy.pauseEvery) return { runCount: 0, pauseMs: policy.pauseMs };
  return { runCount: next, pauseMs: 0 };
}

// The wait before retrying a temporary failure is `backoffMs(retry, { baseMs })` from @bns/contracts.

/**
 * Wait before trying an unlinked account again: about as long as it has been unlinked (so checks
 * thin out: 1 s, 1 s, 2 s, 4 s, …) but never more than `maxMs`, and never past the deadline. This is
 * not `backoffMs`: it grows with the time spent unlinked (which the queue stores), not with a count of
 * tries (which it does not), so a restart mid-outage keeps the same rhythm.
 */
export function unlinkedRecheckMs(unlinkedForMs: number, timeoutMs: number, maxMs: number): number {
  const wait = Math.min(maxMs, Math.max(1000, unlinkedForMs));
  return Math.max(0, Math.min(wait, timeoutMs - unlinkedForMs));
}

/**
 * How long a lane step may wait for other accounts' steps to share its transaction (JOBS_STEP_GATHER_MS),
 * when its send is due in `dueInMs`: never into the second half of the lead before the slot (the step's
 * own database work and the send come after the wait), so a step due now, or with no lead, never waits.
 */
export function gatherWaitMs(dueInMs: number, leadMs: number, gatherMs: number): number {
  return Math.max(0, Math.min(gatherMs, dueInMs - leadMs / 2));
}
