import type { AuthUser } from './auth.types.js';

/**
 * Entries are found by the token's last characters (its signature's: unique per token) and then
 * compared whole. A Map hashes the whole key on every lookup, and a session token is ~800 characters:
 * hashing that was most of the cost of a hit.
 */
const KEY_CHARS = 32;

interface Entry {
  token: string;
  user: AuthUser;
  validUntilMs: number;
  /** The insertion count when the entry was last (re)inserted: its place in the Map's order. */
  seq: number;
}

/**
 * Verified token → its claims, until the token's own expiry. A poller sends the same token every
 * second; checking its RS256 signature each time was the largest single cost of a request. Bounded:
 * the entry used least recently goes first (a Map keeps insertion order; a used entry is moved to the
 * end), but only once `max / 2` insertions have come after it: an entry goes only when it has not been
 * used during at least the last `max / 2` insertions, and a steady poller's hit is one lookup instead of
 * a delete and an insert (which also left the Map's table to be rebuilt every so often).
 */
export class ClaimsCache {
  /** By the token's last KEY_CHARS characters. */
  private readonly entries = new Map<string, Entry>();
  private seq = 0;

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string): AuthUser | undefined {
    const key = token.slice(-KEY_CHARS);
    const hit = this.entries.get(key);
    if (!hit || hit.token !== token) return undefined;
    if (hit.validUntilMs <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.seq - hit.seq >= this.max / 2) {
      this.entries.delete(key);
      hit.seq = ++this.seq;
      this.entries.set(key, hit);
    }
    return hit.user;
  }

  set(token: string, user: AuthUser, validUntilMs: number): void {
    if (this.max === 0) return;
    const key = token.slice(-KEY_CHARS);
    this.entries.delete(key);
    this.entries.set(key, { token, user, validUntilMs, seq: ++this.seq });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
