import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Give up (rethrow the last error) once this much time has passed. */
  budgetMs: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Called before each wait; lets the caller log once per failure kind. */
  onRetry?: (err: unknown, attempt: number) => void;
  /** Stop early (e.g. on shutdown). */
  cancelled?: () => boolean;
}

/**
 * Runs `fn` until it resolves, waiting 250 ms, 500 ms, … (at most `maxDelayMs`) between tries: a
 * Postgres restart or a NATS reconnect delays the work instead of losing it.
 */
export async function retrying<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.budgetMs;
  let delay = options.firstDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() + delay > deadline || options.cancelled?.()) throw err;
      options.onRetry?.(err, attempt);
      await sleep(delay);
      delay = Math.min(delay * 2, options.maxDelayMs ?? 5000);
    }
  }
}
