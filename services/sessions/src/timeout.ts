export const TIMED_OUT = Symbol('timed out');

/**
 * The promise's value, or TIMED_OUT after `ms`. The promise keeps running (nothing can stop a browser
 * call half-way); a failure it has after the deadline is swallowed, since nobody waits for it any more.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
    promise.catch(() => undefined);
  }
}
