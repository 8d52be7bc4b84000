import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { ACCOUNT_DELETIONS_BUCKET, ACCOUNT_LIMITS } from '@bns/contracts';

/**
 * What is kept about a deleted account, by `userKeyOf(userId)`: never the user id itself, so a scan of
 * every table and bucket for it finds nothing once the data is gone.
 */
export interface DeletionMark {
  deletionId: string;
  requestedAtMs: number;
  /** When every owner had answered; absent while the deletion runs. */
  doneAtMs?: number;
}

/** The key a deletion is kept under: a hash of the user id (the id is not kept). */
export function userKeyOf(userId: string): string {
  return createHash('sha256').update(`bns-user:${userId}`).digest('hex');
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Every process's copy of the deletions bucket (JetStream KV, file storage): the gateways refuse tokens
 * issued before an account's deletion; read models drop events of a deleted account that arrive late
 * (a receipt, a sign-out's "disconnected") instead of bringing its rows back. The copy follows the
 * bucket through a watch that starts over after NATS restarts.
 */
export class UserDeletions {
  private readonly logger = new Logger('UserDeletions');
  private readonly marks = new Map<string, DeletionMark>();
  private stopped = false;

  private constructor(
    private readonly nc: NatsConnection,
    private kv: KV,
  ) {}

  static async open(nc: NatsConnection): Promise<UserDeletions> {
    const deletions = new UserDeletions(nc, await openBucket(nc));
    await deletions.follow();
    return deletions;
  }

  /** The user's latest deletion, as this process knows it. */
  markOf(userId: string): DeletionMark | undefined {
    // Asked on every request: no hashing while no account was deleted.
    if (this.marks.size === 0) return undefined;
    return this.marks.get(userKeyOf(userId));
  }

  /** A token issued at `issuedAtS` (epoch seconds) was issued before the account's deletion: refused. */
  revokes(userId: string, issuedAtS: number | undefined): boolean {
    const mark = this.markOf(userId);
    if (!mark) return false;
    // iat has whole seconds: a token of the very second of the deletion is refused too.
    return issuedAtS === undefined || issuedAtS * 1000 <= mark.requestedAtMs;
  }

  /**
   * Whether something that happened at `at` belongs to a deleted account: while its deletion runs, or
   * before the deletion finished (a late event of the old account). What happens after belongs to the
   * new, empty account of the same user id.
   */
  isGone(userId: string, at: Date | string): boolean {
    const mark = this.markOf(userId);
    if (!mark) return false;
    if (mark.doneAtMs === undefined) return true;
    const t = typeof at === 'string' ? Date.parse(at) : at.getTime();
    return !(t > mark.doneAtMs);
  }

  /** Writes the user's mark (the coordinator), and knows it here at once. */
  async put(userId: string, mark: DeletionMark): Promise<void> {
    const key = userKeyOf(userId);
    await this.kv.put(key, JSON.stringify(mark));
    this.marks.set(key, mark);
  }

  /** Knows the mark here at once, before the bucket's watch brings it (the replica that took the request). */
  remember(userId: string, mark: DeletionMark): void {
    this.marks.set(userKeyOf(userId), mark);
  }

  stop(): void {
    this.stopped = true;
  }

  /** Loads every mark, then keeps following the bucket in the background. */
  private async follow(): Promise<void> {
    let loaded!: () => void;
    const initial = new Promise<void>((resolve) => (loaded = resolve));
    const loop = async () => {
      while (!this.stopped && !this.nc.isClosed()) {
        try {
          const watch = await this.kv.watch();
          // The initial values end when the watch has nothing pending; an empty bucket has none at all.
          if ((await this.kv.status()).values === 0) loaded();
          for await (const e of watch) {
            if (e.operation === 'PUT') this.marks.set(e.key, e.json<DeletionMark>());
            else this.marks.delete(e.key);
            if (e.delta === 0) loaded();
            if (this.stopped) break;
          }
        } catch (err) {
          if (this.stopped || this.nc.isClosed()) break;
          this.logger.warn({ err: (err as Error).name }, 'deletions bucket watch stopped; following it again');
        }
        if (this.stopped || this.nc.isClosed()) break;
        await sleep(1000);
        this.kv = await openBucket(this.nc).catch(() => this.kv);
      }
      loaded();
    };
    void loop();
    await Promise.race([initial, sleep(5000)]);
  }
}

async function openBucket(nc: NatsConnection): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(ACCOUNT_DELETIONS_BUCKET, {
      history: 1,
      storage: StorageType.File,
      ttl: ACCOUNT_LIMITS.deletionMemoryDays * 24 * 3600 * 1000,
    });
  } catch {
    // Another process made it (maybe with other settings): use it as it is.
    return kvm.open(ACCOUNT_DELETIONS_BUCKET);
  }
}
