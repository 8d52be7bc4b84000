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

export interface RetryOptions extends BackoffPolicy {
  /** Give up after this many retries (tries = retries + 1). Unlimited when omitted. */
  retries?: number;
  /**
   * Give up once the next wait would end more than this long after the first try started: a
   * Postgres restart or a NATS reconnect delays the work instead of losing it, but not forever.
   */
  budgetMs?: number;
  /** Errors this answers false for are thrown at once. */
  shouldRetry?: (err: unknown) => boolean;
  /** Stop early (e.g. on shutdown): checked after each failed try; the error is thrown. */
  cancelled?: () => boolean;
  /** Called before each wait (`tryNumber` is the try that failed, 1-based); lets the caller log once per failure kind. */
  onRetry?: (err: unknown, tryNumber: number, waitMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Runs `attempt` until it resolves, or until `shouldRetry` says no, `cancelled` says yes, `retries`
 * retries are spent or the next wait would overrun `budgetMs`, waiting `backoffMs` between tries. The
 * last error is thrown.
 */
export async function withRetry<T>(attempt: (tryNumber: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const deadline = options.budgetMs === undefined ? Number.POSITIVE_INFINITY : now() + options.budgetMs;
  for (let tryNumber = 1; ; tryNumber++) {
    try {
      return await attempt(tryNumber);
    } catch (err) {
      const waitMs = backoffMs(tryNumber, options);
      if (options.retries !== undefined && tryNumber > options.retries) throw err;
      if (options.shouldRetry && !options.shouldRetry(err)) throw err;
      if (now() + waitMs > deadline || options.cancelled?.()) throw err;
      options.onRetry?.(err, tryNumber, waitMs);
      await sleep(waitMs);
    }
  }
}
