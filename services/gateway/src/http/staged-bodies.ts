import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, setSha256Backend, StorageType, type ObjectStore } from '@nats-io/obj';
import { AppError } from '@bns/service-kit';

/**
 * The chunks a staged body is cut into: a 5.7 MB start goes in 12 messages, each acknowledged by
 * JetStream, where the store's default 128 KiB made 45 (about half the time of a put). Below the
 * 1 MB `max_payload` a NATS server has by default.
 */
export const STAGED_CHUNK_BYTES = 512 * 1024;

/**
 * Request bodies too big for one NATS message, put in a JetStream object store bucket for the service
 * that handles the request to read once (it deletes them; `ttlMs` removes what it never read).
 */
export class StagedBodies {
  private readonly logger = new Logger('StagedBodies');
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    private readonly ttlMs: number,
  ) {
    // The object store hashes what it stores; node's SHA-256 is many times faster than the JS default.
    setSha256Backend('native');
  }

  /**
   * Stores `text` under a new name. A bucket lost with the broker (a NATS restart on an empty store)
   * is made again and the put tried once more, so one lost bucket never fails every later request.
   */
  async put(text: string): Promise<{ bucket: string; name: string }> {
    const name = randomUUID();
    for (let attempt = 1; ; attempt++) {
      try {
        await (await this.open()).putBlob({ name, options: { max_chunk_size: STAGED_CHUNK_BYTES } }, Buffer.from(text));
        return { bucket: this.bucket, name };
      } catch (err) {
        // The handle may name a bucket that is gone: the next call makes it again.
        this.store = undefined;
        if (attempt < 2) continue;
        this.logger.warn({ err, bucket: this.bucket }, 'could not stage a request body');
        throw AppError.unavailable();
      }
    }
  }

  private open(): Promise<ObjectStore> {
    this.store ??= new Objm(this.nc)
      .create(this.bucket, { storage: StorageType.File, ttl: this.ttlMs * 1_000_000 })
      .catch((err: unknown) => {
        this.store = undefined;
        throw err;
      });
    return this.store;
  }
}
