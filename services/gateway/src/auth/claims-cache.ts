import type { AuthUser } from './auth.types.js';

/**
 * Verified token → its claims, until the token's own expiry. A poller sends the same token every
 * second; checking its RS256 signature each time was the largest single cost of a request. Bounded:
 * the least recently used entry goes first (a Map keeps insertion order; a hit re-inserts).
 */
export class ClaimsCache {
  private readonly entries = new Map<string, { user: AuthUser; validUntilMs: number }>();

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string): AuthUser | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    this.entries.delete(token);
    if (hit.validUntilMs <= this.now()) return undefined;
    this.entries.set(token, hit);
    return hit.user;
  }

  set(token: string, user: AuthUser, validUntilMs: number): void {
    if (this.max === 0) return;
    this.entries.delete(token);
    this.entries.set(token, { user, validUntilMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
