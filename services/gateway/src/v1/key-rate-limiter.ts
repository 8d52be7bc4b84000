/**
 * Per-key limit of the /v1 API on this replica: a bucket of `quota` requests refilled evenly over
 * `windowS` seconds. Every answer says where the caller stands (IETF RateLimit / RateLimit-Policy).
 */
export interface RateState {
  allowed: boolean;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit `t`), or until one request is allowed when refused. */
  resetS: number;
}

export class KeyRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;
  readonly policy: string;

  constructor(
    private readonly quota: number,
    windowS: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = quota / (windowS * 1000);
    this.policy = `"per-key";q=${quota};w=${windowS}`;
  }

  take(key: string): RateState {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.quota, at: now };
    b.tokens = Math.min(this.quota, b.tokens + (now - b.at) * this.perMs);
    b.at = now;
    if (this.buckets.size > 100_000) this.sweep(now);
    this.buckets.set(key, b);
    if (b.tokens < 1)
      return { allowed: false, remaining: 0, resetS: Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000)) };
    b.tokens -= 1;
    return {
      allowed: true,
      remaining: Math.floor(b.tokens),
      resetS: Math.ceil((this.quota - b.tokens) / this.perMs / 1000),
    };
  }

  /** Buckets that are full again are forgotten (a new one starts full). */
  private sweep(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * this.perMs >= this.quota) this.buckets.delete(k);
  }

  header(state: RateState): string {
    return `"per-key";r=${state.remaining};t=${state.resetS}`;
  }
}
