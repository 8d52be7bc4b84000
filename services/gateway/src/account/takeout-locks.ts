import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { ACCOUNT_LIMITS, ACCOUNT_TAKEOUTS_BUCKET } from '@bns/contracts';
import { AppError, NATS_CONNECTION, userKeyOf } from '@bns/service-kit';

/** A take-out's hold on its user: renewed while it runs, released at the end. */
export interface TakeoutHold {
  release(): Promise<void>;
}

/**
 * At most one take-out per user across every gateway replica: an entry in the `account-takeouts` bucket
 * (by the user's hash) made with `create`, which fails when one is there. The bucket's age limit is the
 * lease, so an entry its replica stopped renewing (the process died) goes by itself.
 */
@Injectable()
export class TakeoutLocks implements OnModuleInit {
  private readonly logger = new Logger('TakeoutLocks');
  private bucket?: Promise<KV>;

  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  onModuleInit(): void {
    this.bucket = this.open();
    this.bucket.catch(() => (this.bucket = undefined));
  }

  /** The user's hold, or undefined when another take-out of theirs runs. */
  async take(userId: string): Promise<TakeoutHold | undefined> {
    const kv = await (this.bucket ??= this.open()).catch((err: unknown) => {
      this.bucket = undefined;
      throw AppError.unavailable(undefined, { cause: (err as Error).message });
    });
    const key = userKeyOf(userId);
    try {
      await kv.create(key, String(Date.now()));
    } catch {
      return undefined;
    }
    const renew = setInterval(
      () => void kv.put(key, String(Date.now())).catch(() => undefined),
      ACCOUNT_LIMITS.takeoutLeaseMs / 3,
    );
    renew.unref();
    return {
      release: async () => {
        clearInterval(renew);
        await kv
          .delete(key)
          .catch((err: unknown) =>
            this.logger.warn({ err: (err as Error).name }, 'could not release a take-out; its lease ends it'),
          );
      },
    };
  }

  private async open(): Promise<KV> {
    const kvm = new Kvm(this.nc);
    try {
      return await kvm.create(ACCOUNT_TAKEOUTS_BUCKET, {
        history: 1,
        storage: StorageType.File,
        ttl: ACCOUNT_LIMITS.takeoutLeaseMs,
      });
    } catch {
      return kvm.open(ACCOUNT_TAKEOUTS_BUCKET);
    }
  }
}
