/**
 * Token bucket per key: `burst` requests at once, refilled at `perSecond`. In memory per gateway
 * replica, so the effective limit across N replicas is at most N times this.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    // Full buckets carry no information; dropping them keeps memory bounded by active users.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Takes one token; answers how many seconds to wait when there is none. */
  take(key: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const t = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((t - bucket.at) / 1000) * this.perSecond);
    bucket.at = t;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)) };
  }

  /** The wait (seconds) before `key` has a token again, without taking one; undefined when it has one. */
  peek(key: string): number | undefined {
    const bucket = this.buckets.get(key);
    if (!bucket) return undefined;
    const tokens = Math.min(this.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond);
    return tokens >= 1 ? undefined : Math.max(1, Math.ceil((1 - tokens) / this.perSecond));
  }

  sweep(): void {
    const t = this.now();
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
