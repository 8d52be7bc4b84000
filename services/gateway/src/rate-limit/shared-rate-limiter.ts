import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { PubAck, RpcClient } from '@bns/service-kit';
import { countLocalRateDecision, setRateLimitStoreUp } from '../metrics/gateway.metrics.js';
import { RateLimiter } from './rate-limiter.js';

export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };
const ALLOWED: Verdict = Object.freeze({ allowed: true });

/** The NATS KV bucket every gateway replica shares for per-user rate limits. */
export const RATE_LIMIT_BUCKET = 'gateway_rate_limits';
const MAX_ATTEMPTS = 4;
/** Unused leased requests are forgotten after this long (they only ever make the limit stricter). */
const LEASE_MS = 5000;
/**
 * After the store failed to answer, requests go straight to the local bucket, and the store is tried
 * again in the background (never by a request) every this long until it answers.
 */
export const STORE_RETRY_MS = 500;
/**
 * How long a read or a write may take before the store counts as away. A healthy JetStream answers in
 * a millisecond or two; one that cannot answer must not hold requests for the KV client's 5 s.
 */
export const STORE_TIMEOUT_MS = 200;

/** JetStream's error code for a write naming a revision that moved on (`wrong last sequence`). */
const WRONG_LAST_SEQUENCE = 10071;

/** A LimitStore write refused because the key's revision moved on (another writer was first). */
export class RevisionMoved extends Error {}

/**
 * Where the shared values live: `read` answers a key's value and revision (undefined when it has
 * none), `write` stores a value only while the key's revision is still `last` (0: the key has none)
 * and answers the new revision; it throws RevisionMoved when the revision moved on (any other error:
 * the store could not answer).
 */
export interface LimitStore {
  read(key: string): Promise<{ value: string | undefined; revision: number } | undefined>;
  write(key: string, value: string, last: number): Promise<number>;
  /**
   * Makes the store usable again after the broker came back (a bucket kept in memory is gone after a
   * restart: it is created again); throws while it cannot.
   */
  recover?(): Promise<void>;
}

/** `promise`, or a rejection once `ms` passed (what it was doing goes on, unheard). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Per-user limit shared by every gateway replica, kept in NATS KV (JetStream, which we already run).
 * Each key holds one number, the GCRA "theoretical arrival time": a request is allowed when it would
 * not push that time more than `burst` intervals into the future. That is a token bucket of `burst`
 * refilled at `perSecond`, stored in one value, updated with compare-and-set on the key's revision so
 * two replicas cannot both spend the last token. The last revision seen is kept, so a round trip is
 * usually one update (a conflict costs a read and another try).
 *
 * A replica takes up to `lease` requests at once from the shared budget and spends them locally (for
 * at most LEASE_MS), so a steady poller costs one KV round trip per `lease` requests. Leased requests
 * were paid for in the shared value, so the limit across replicas still holds; at worst a user who
 * moves to another replica leaves `lease - 1` of them unused.
 *
 * When NATS KV cannot answer (a broker restart, a bucket lost with it), the replica falls back to its
 * own in-memory bucket at once, circuit-breaker style: a request is never refused, failed or held
 * because the limiter's store is away. Only the requests that find it away wait, at most
 * STORE_TIMEOUT_MS; after that no request touches the store until a background retry (every
 * STORE_RETRY_MS, recreating the bucket) finds it answering again. A NATS reconnect recreates the
 * bucket at once. The bucket lives in memory: after a broker restart every user starts from a full
 * bucket, which grants at most one burst more; keeping it on file would cost every lease a disk write.
 *
 * Writes are JetStream publishes made through the RpcClient (see `kvStore`), so they leave in the
 * same socket write as the other requests of their turn: through nats.js each was a write of its own.
 */
export class SharedRateLimiter {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private readonly known = new Map<string, { tat: number; revision: number }>();
  /** By the caller's own key (no KV-safe form needed: they never leave this replica). */
  private readonly leases = new Map<string, { left: number; until: number }>();
  /** The store update in progress per caller key (see take). */
  private readonly updating = new Map<string, Promise<Verdict>>();
  private readonly fallback: RateLimiter;
  /** False from a failed store call until a background retry finds the store answering. */
  private storeUp = true;
  private retrying?: NodeJS.Timeout;
  private readonly logger = new Logger('RateLimiter');
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: LimitStore | undefined,
    perSecond: number,
    burst: number,
    private readonly lease: number,
    private readonly now: () => number = Date.now,
  ) {
    this.intervalMs = 1000 / perSecond;
    this.toleranceMs = burst * this.intervalMs;
    this.fallback = new RateLimiter(perSecond, burst, now);
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
    setRateLimitStoreUp(true);
  }

  static async open(
    nc: NatsConnection,
    rpc: RpcClient,
    perSecond: number,
    burst: number,
    lease = 1,
  ): Promise<SharedRateLimiter> {
    // A key idle for longer than a full refill carries no information; the bucket forgets it.
    const ttl = Math.max(60_000, Math.ceil((burst / perSecond) * 1000) * 2);
    const kvm = new Kvm(nc);
    const bucket = async (): Promise<KV> => {
      try {
        return await kvm.create(RATE_LIMIT_BUCKET, { history: 1, ttl, storage: StorageType.Memory });
      } catch {
        // Another replica made it with other settings: use it as it is.
        return kvm.open(RATE_LIMIT_BUCKET);
      }
    };
    const store = kvStore(await bucket(), rpc, RATE_LIMIT_BUCKET, bucket);
    const limiter = new SharedRateLimiter(store, perSecond, burst, Math.max(1, Math.min(lease, burst)));
    void limiter.followReconnects(nc);
    return limiter;
  }

  /** Whether the shared store answers (false: this replica limits on its own bucket for now). */
  get storeAnswers(): boolean {
    return this.storeUp;
  }

  /** A reconnect may be to a broker that restarted and lost the bucket: it is made again at once. */
  private async followReconnects(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'reconnect') void this.retryStore();
    }
  }

  /** The store did not answer: the local bucket decides until a background retry finds it back. */
  private storeAway(err: unknown): void {
    if (!this.storeUp) return;
    this.storeUp = false;
    setRateLimitStoreUp(false);
    this.logger.warn(
      `rate-limit store (NATS KV) is not answering (${(err as Error)?.message ?? err}): limiting on this replica's own buckets until it does`,
    );
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retrying) return;
    this.retrying = setTimeout(() => {
      this.retrying = undefined;
      void this.retryStore();
    }, STORE_RETRY_MS);
    this.retrying.unref();
  }

  /** Recreates the store (its bucket) and takes it back into use; on failure, tries again later. */
  private async retryStore(): Promise<void> {
    if (!this.store) return;
    try {
      await within(this.store.recover?.() ?? Promise.resolve(), STORE_TIMEOUT_MS * 5);
      await within(this.store.read(kvKey('probe')), STORE_TIMEOUT_MS);
    } catch (err) {
      if (this.storeUp) this.storeAway(err);
      else this.scheduleRetry();
      return;
    }
    // Revisions seen before may belong to a bucket that is gone.
    this.known.clear();
    this.leases.clear();
    if (!this.storeUp) {
      this.storeUp = true;
      setRateLimitStoreUp(true);
      this.logger.log('rate-limit store (NATS KV) answers again: limits are shared by every replica again');
    }
  }

  /**
   * Spends one request of a lease this replica holds for `rawKey`, if any: true when it did. Most of a
   * steady caller's requests are answered so, in the same turn (no promise).
   */
  spendLeased(rawKey: string): boolean {
    if (!this.store) return false;
    const held = this.leases.get(rawKey);
    if (!held || held.left <= 0 || held.until <= this.now()) return false;
    held.left--;
    return true;
  }

  async take(rawKey: string): Promise<Verdict> {
    if (!this.store) return this.fallback.take(rawKey);
    // One update of a key at a time on this replica: concurrent requests of one user wait for it and
    // spend the lease it takes, instead of racing each other's compare-and-set.
    for (;;) {
      if (this.spendLeased(rawKey)) return ALLOWED;
      // The store failed to answer: the local bucket decides, at once (no request waits for
      // another's failure and then for its own, in turn).
      if (!this.storeUp) return this.local(rawKey);
      const updating = this.updating.get(rawKey);
      if (!updating) break;
      await updating;
    }
    const update = this.update(this.store, rawKey);
    this.updating.set(rawKey, update);
    try {
      return await update;
    } finally {
      this.updating.delete(rawKey);
    }
  }

  /** Takes a lease from the shared value (compare-and-set on its revision, read again on a conflict). */
  private async update(store: LimitStore, rawKey: string): Promise<Verdict> {
    const key = kvKey(rawKey);
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        let last = this.known.get(key);
        if (!last || attempt > 0) last = await this.read(key);
        const t = this.now();
        const start = Math.max(last?.tat ?? 0, t);
        // As many as the lease size, but never more than the bucket holds right now.
        const room = Math.floor((t + this.toleranceMs - start) / this.intervalMs + 1e-9);
        if (room < 1) {
          const next = start + this.intervalMs;
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((next - t - this.toleranceMs) / 1000)) };
        }
        const take = Math.min(this.lease, room);
        const next = start + take * this.intervalMs;
        try {
          const value = String(next);
          const revision = await within(store.write(key, value, last?.revision ?? 0), STORE_TIMEOUT_MS);
          this.known.set(key, { tat: next, revision });
          if (take > 1) this.leases.set(rawKey, { left: take - 1, until: t + LEASE_MS });
          else this.leases.delete(rawKey);
          return ALLOWED;
        } catch (err) {
          if (!(err instanceof RevisionMoved)) throw err;
          this.known.delete(key); // someone else wrote it first: read and try again
        }
      }
    } catch (err) {
      // KV unreachable: the local bucket decides until the store answers again
      this.storeAway(err);
      return this.local(rawKey);
    }
    // Other replicas won every try: refused for now, never let through on a budget of this replica's own.
    return { allowed: false, retryAfterSeconds: 1 };
  }

  private local(rawKey: string): Verdict {
    countLocalRateDecision();
    return this.fallback.take(rawKey);
  }

  private async read(key: string): Promise<{ tat: number; revision: number } | undefined> {
    const entry = await within(this.store!.read(key), STORE_TIMEOUT_MS);
    if (!entry) return undefined;
    const found = { tat: Number(entry.value) || 0, revision: entry.revision };
    this.known.set(key, found);
    return found;
  }

  private sweep(): void {
    const t = this.now();
    for (const [key, v] of this.known) if (v.tat < t) this.known.delete(key);
    for (const [key, l] of this.leases) if (l.until <= t) this.leases.delete(key);
    this.fallback.sweep();
  }
}

/** KV keys allow only [-/_=.a-zA-Z0-9]: user ids pass as they are, anything else is hashed. */
function kvKey(key: string): string {
  return /^[-_=a-zA-Z0-9]{1,200}$/.test(key) ? key : `h_${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * A NATS KV bucket as a LimitStore. Reads go through the KV client; a write is what the KV client's
 * `update` sends (a publish on `$KV.<bucket>.<key>` with Nats-Expected-Last-Subject-Sequence), made
 * through the RpcClient, whose requests of one turn leave in one socket write. `reopen` makes the
 * bucket again (after a broker restart) and the reads go to the new handle.
 */
export function kvStore(kv: KV, rpc: RpcClient, bucket: string, reopen?: () => Promise<KV>): LimitStore {
  return {
    async recover() {
      if (reopen) kv = await reopen();
    },
    async read(key) {
      const entry = await kv.get(key);
      if (!entry) return undefined;
      // A deleted or purged key keeps a marker: its revision is the one a write must name.
      return { value: entry.operation === 'PUT' ? entry.string() : undefined, revision: entry.revision };
    },
    async write(key, value, last) {
      const hdrs = headers();
      hdrs.set('Nats-Expected-Last-Subject-Sequence', String(last));
      const ack = (
        await rpc.requestMessage(`$KV.${bucket}.${key}`, value, { headers: hdrs, timeoutMs: STORE_TIMEOUT_MS })
      ).json<PubAck>();
      // A refusal carries `seq: 0` next to its error: the error decides.
      const refused = `KV write refused: ${ack.error?.description ?? 'no ack'}`;
      if (ack.error?.err_code === WRONG_LAST_SEQUENCE) throw new RevisionMoved(refused);
      if (ack.error || typeof ack.seq !== 'number' || ack.seq < 1) throw new Error(refused);
      return ack.seq;
    },
  };
}
