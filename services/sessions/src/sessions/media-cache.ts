import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { ErrorKind, MEDIA_BUCKET, MEDIA_MESSAGES, MediaErrorCode, type MediaRef } from '@bns/contracts';
import { AppError, NATS_CONNECTION, SERVICE_ENV } from '@bns/service-kit';
import type { SessionsEnv } from '../config/env.js';
import type { OutgoingMedia } from './engines/engine.types.js';

/**
 * Attachments' bytes on this shard: fetched from the object store once and shared by every recipient
 * of a job (and by other jobs with the same file), up to MEDIA_CACHE_BYTES; the least recently used
 * go first. A fetch in progress is shared too, so a job's first sends never fetch twice.
 */
@Injectable()
export class MediaCache {
  private readonly logger = new Logger('MediaCache');
  private readonly entries = new Map<string, Promise<Buffer>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  private store?: Promise<ObjectStore>;
  /** Fetches from the object store since start (what the tests and the benchmark read). */
  fetches = 0;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: Pick<SessionsEnv, 'MEDIA_CACHE_BYTES'>,
  ) {}

  async load(ref: MediaRef): Promise<OutgoingMedia> {
    let entry = this.entries.get(ref.object);
    if (entry) {
      this.entries.delete(ref.object);
      this.entries.set(ref.object, entry);
    } else {
      entry = this.fetch(ref);
      this.entries.set(ref.object, entry);
      this.sizes.set(ref.object, ref.size);
      this.bytes += ref.size;
      // A failed fetch is not remembered: the next send asks again.
      entry.catch(() => this.forget(ref.object));
      this.evict(ref.object);
    }
    return { ref, data: await entry };
  }

  private async fetch(ref: MediaRef): Promise<Buffer> {
    this.fetches++;
    let blob: Uint8Array | null;
    try {
      blob = await (await this.open()).getBlob(ref.object);
    } catch (err) {
      this.store = undefined;
      this.logger.warn({ err }, 'could not fetch an attachment; the send is tried again');
      throw new AppError(ErrorKind.Unavailable, MediaErrorCode.SendFailed, MEDIA_MESSAGES.sendFetchFailed);
    }
    if (!blob) throw AppError.validation(MediaErrorCode.SendFailed, MEDIA_MESSAGES.sendMissing);
    const data = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    if (data.length !== ref.size || createHash('sha256').update(data).digest('hex') !== ref.sha256)
      throw AppError.validation(MediaErrorCode.SendFailed, MEDIA_MESSAGES.sendMissing);
    return data;
  }

  private evict(keep: string): void {
    for (const object of this.entries.keys()) {
      if (this.bytes <= this.env.MEDIA_CACHE_BYTES) return;
      if (object !== keep) this.forget(object);
    }
  }

  private forget(object: string): void {
    if (!this.entries.delete(object)) return;
    this.bytes -= this.sizes.get(object) ?? 0;
    this.sizes.delete(object);
  }

  private open(): Promise<ObjectStore> {
    this.store ??= new Objm(this.nc).open(MEDIA_BUCKET).catch((err: unknown) => {
      this.store = undefined;
      throw err;
    });
    return this.store;
  }
}
