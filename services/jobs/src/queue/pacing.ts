/** Timing rules of the queue, pure so they can be tested without a clock. */

/** The pause after a send: the configured delay plus 0..jitter at random. */
export function paceMs(delayMs: number, jitterMs: number, random: () => number = Math.random): number {
  return delayMs + (jitterMs > 0 ? Math.floor(random() * (jitterMs + 1)) : 0);
}

/** Wait before retry `retry` (1-based) after a temporary failure: base, 2×base, 4×base, … */
export function retryDelayMs(retry: number, baseMs: number): number {
  return baseMs * 2 ** Math.max(0, retry - 1);
}

/**
 * Wait before trying an unlinked account again: about as long as it has been unlinked (so checks
 * thin out: 1 s, 1 s, 2 s, 4 s, …) but never more than `maxMs`, and never past the deadline.
 */
export function unlinkedRecheckMs(unlinkedForMs: number, timeoutMs: number, maxMs: number): number {
  const wait = Math.min(maxMs, Math.max(1000, unlinkedForMs));
  return Math.max(0, Math.min(wait, timeoutMs - unlinkedForMs));
}
