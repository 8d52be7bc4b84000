import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { MEDIA_BUCKET } from '@bns/contracts';
import { NATS_CONNECTION } from '@bns/service-kit';

/** The attachments' bytes in the object store, as the jobs service needs them: only to delete. */
@Injectable()
export class MediaObjects {
  private readonly logger = new Logger('MediaObjects');
  private store?: Promise<ObjectStore>;

  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  /** Deletes the object; one already gone (or a bucket not made yet) is not an error. */
  async delete(object: string): Promise<void> {
    try {
      const store = await this.open();
      await store.delete(object);
    } catch (err) {
      this.store = undefined;
      const text = String((err as Error)?.message ?? err);
      if (/not found|no such|does not exist/i.test(text)) return;
      this.logger.warn({ err }, 'could not delete an attachment object; the next clean-up tries again');
      throw err;
    }
  }

  private open(): Promise<ObjectStore> {
    this.store ??= new Objm(this.nc).open(MEDIA_BUCKET).catch((err: unknown) => {
      this.store = undefined;
      throw err;
    });
    return this.store;
  }
}
