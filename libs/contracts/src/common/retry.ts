/**
 * The one retry/backoff rule of the product: wait `baseMs`, then `factor` times longer each retry, never
 * more than `maxMs`, optionally with up to `jitter` (0..1) of the wait added at random so retries of many
 * clients do not line up. Services and the web use this instead of their own formulas.
 */
export interface BackoffPolicy {
  baseMs: number;
  /** Growth per retry; 2 doubles (base, 2×, 4×, …). */
  factor?: number;
  maxMs?: number;
  /** Fraction of the wait added at random, 0..1 (0 = exact). */
  jitter?: number;
}

/** The wait before retry `retry` (1-based). */
export function backoffMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const { baseMs, factor = 2, maxMs = Number.POSITIVE_INFINITY, jitter = 0 } = policy;
  const wait = Math.min(maxMs, baseMs * factor ** Math.max(0, retry - 1));
  return jitter > 0 ? Math.round(wait + wait * jitter * random()) : wait;
}

/**
 * Runs `attempt` until it resolves, `shouldRetry` says no, or `retries` retries are spent, waiting
 * `backoffMs` between tries. The last error is thrown.
 */
export async function withRetry<T>(
  attempt: (tryNumber: number) => Promise<T>,
  options: BackoffPolicy & { retries: number; shouldRetry?: (err: unknown) => boolean; sleep?: (ms: number) => Promise<void> },
): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let tryNumber = 1; ; tryNumber++) {
    try {
      return await attempt(tryNumber);
    } catch (err) {
      if (tryNumber > options.retries || (options.shouldRetry && !options.shouldRetry(err))) throw err;
      await sleep(backoffMs(tryNumber, options));
    }
  }
}
