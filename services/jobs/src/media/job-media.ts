import { Injectable } from '@nestjs/common';
import type { MediaRef } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { MediaRepository } from './media.repository.js';

/** Jobs whose attachment a replica remembers: a job's attachment never changes, so one read per job and replica. */
const REMEMBERED_JOBS = 2000;

/** A job's attachment reference for its sends, read once per job and replica (never per recipient). */
@Injectable()
export class JobMedia {
  private readonly known = new Map<string, Promise<MediaRef | null>>();

  constructor(
    private readonly tx: Transactions,
    private readonly media: MediaRepository,
  ) {}

  of(jobId: string): Promise<MediaRef | null> {
    const known = this.known.get(jobId);
    if (known) {
      // Most recently used last, so the oldest is the one forgotten.
      this.known.delete(jobId);
      this.known.set(jobId, known);
      return known;
    }
    const read = this.media.ofJob(this.tx.manager, jobId);
    this.known.set(jobId, read);
    // A failed read is asked again next time.
    read.catch(() => this.known.delete(jobId));
    if (this.known.size > REMEMBERED_JOBS) this.known.delete(this.known.keys().next().value!);
    return read;
  }
}
