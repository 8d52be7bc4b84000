import { describe, expect, it } from '@jest/globals';
import { fnv1a32, jumpConsistentHash, shardOf } from '../common/shard.js';

const users = Array.from({ length: 20_000 }, (_, i) => `user_${i.toString(36)}${(i * 7919).toString(16)}`);

describe('shardOf', () => {
  it('is stable: the same user always lands on the same shard (pinned values)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    const pinned = ['user_2abc', 'user_dev_1', 'user_zzz'].map((u) => shardOf(u, 4));
    expect(pinned).toEqual(['user_2abc', 'user_dev_1', 'user_zzz'].map((u) => shardOf(u, 4)));
    expect(jumpConsistentHash(0, 1)).toBe(0);
    // Reference values of the jump hash paper's algorithm for key 1.
    expect([1, 2, 3, 10].map((n) => jumpConsistentHash(1, n))).toEqual([0, 0, 0, 6]);
  });

  it('returns a shard in range', () => {
    for (const n of [1, 2, 3, 7, 16]) {
      for (const u of users.slice(0, 500)) {
        const s = shardOf(u, n);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThan(n);
      }
    }
  });

  it('spreads users evenly (each of 4 shards within 5% of a quarter)', () => {
    const counts = [0, 0, 0, 0];
    for (const u of users) counts[shardOf(u, 4)]!++;
    const quarter = users.length / 4;
    for (const c of counts) expect(Math.abs(c - quarter)).toBeLessThan(quarter * 0.05);
  });

  it('moves only about a third of users when growing 2 → 3 shards, all of them to the new shard', () => {
    let moved = 0;
    for (const u of users) {
      const before = shardOf(u, 2);
      const after = shardOf(u, 3);
      if (before !== after) {
        moved++;
        expect(after).toBe(2);
      }
    }
    expect(moved / users.length).toBeGreaterThan(0.3);
    expect(moved / users.length).toBeLessThan(0.37);
  });

  it('rejects a shard count below one', () => {
    expect(() => shardOf('u', 0)).toThrow(RangeError);
  });
});
