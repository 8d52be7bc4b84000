/**
 * The user → sessions shard function, identical in every service. FNV-1a (32-bit) turns the user id
 * into a key; Lamping & Veach's jump consistent hash turns the key into a bucket, so growing from n to
 * n + 1 shards moves only about 1/(n + 1) of the users.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const MASK_64 = (1n << 64n) - 1n;
const JUMP_MULTIPLIER = 2862933555777941757n;

export function jumpConsistentHash(key: number, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1)
    throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
  let k = BigInt(key);
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = (k * JUMP_MULTIPLIER + 1n) & MASK_64;
    j = Math.floor(((b + 1) * 2 ** 31) / (Number(k >> 33n) + 1));
  }
  return b;
}

export function shardOf(userId: string, shards: number): number {
  return jumpConsistentHash(fnv1a32(userId), shards);
}
