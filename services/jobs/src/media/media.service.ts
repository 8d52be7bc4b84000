import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  MEDIA_MESSAGES,
  MediaErrorCode,
  MediaIdSchema,
  type MediaRef,
  type ReplyOf,
  type RequestOf,
} from '@bns/contracts';
import { AppError, SERVICE_ENV, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { MEDIA_CLOCK, type MediaClock } from './media-clock.js';
import { MediaObjects } from './media-objects.js';
import { mediaRef, mediaView, MediaRepository, type MediaRow } from './media.repository.js';

const DAY_MS = 86_400_000;
/** Attachments one clean-up transaction deletes; more wait for the next round. */
const EXPIRE_BATCH = 100;

const notFound = () => AppError.notFound(MediaErrorCode.NotFound, MEDIA_MESSAGES.notFound);

/**
 * Attachments' metadata: who owns what (an id of another user is "not found", as an unknown one), the
 * same bytes of the same user stored once, what a job or a template holds, and the retention clean-up
 * of what nothing has used for MEDIA_RETENTION_DAYS.
 */
@Injectable()
export class MediaLibrary implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('MediaLibrary');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly tx: Transactions,
    private readonly media: MediaRepository,
    private readonly objects: MediaObjects,
    @Inject(MEDIA_CLOCK) private readonly clock: MediaClock,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.MEDIA_SWEEP_MS <= 0) return;
    this.timer = setInterval(() => void this.sweepQuietly(), this.env.MEDIA_SWEEP_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async register(req: RequestOf<'jobs.media.register'>): Promise<ReplyOf<'jobs.media.register'>> {
    const id = `med_${randomBytes(16).toString('base64url')}`;
    const { media, created } = await this.media.register(
      this.tx.manager,
      { ...req, id, userId: req.userId },
      this.clock.now(),
    );
    return { media: mediaView(media), created };
  }

  async get(req: RequestOf<'jobs.media.get'>): Promise<ReplyOf<'jobs.media.get'>> {
    const media = await this.find(req.userId, req.mediaId);
    return { media: mediaView(media), ref: mediaRef(media) };
  }

  /** A template (or another holder) now holds `mediaId`, or nothing. */
  async hold(req: RequestOf<'jobs.media.hold'>): Promise<ReplyOf<'jobs.media.hold'>> {
    if (req.mediaId === undefined || req.mediaId === null) {
      await this.media.release(this.tx.manager, req.userId, req.holder);
      return { media: null };
    }
    return this.tx.run(async (em) => {
      const media = await this.use(em, req.userId, req.mediaId);
      await this.media.hold(em, req.userId, req.holder, media.mediaId);
      return { media: mediaView(await this.find(req.userId, media.mediaId, em)) };
    });
  }

  /** The user's attachment named in a request; "not found" for anything else (another user's, unknown, not an id). */
  async find(userId: string, mediaId: unknown, em: EntityManager = this.tx.manager): Promise<MediaRow> {
    const id = MediaIdSchema.safeParse(mediaId);
    if (!id.success) throw notFound();
    const media = await this.media.find(em, userId, id.data);
    if (!media) throw notFound();
    return media;
  }

  /** Inside a start's transaction: marks the attachment used and locks it against the clean-up. */
  async use(em: EntityManager, userId: string, mediaId: unknown): Promise<MediaRef> {
    const id = MediaIdSchema.safeParse(mediaId);
    const media = id.success ? await this.media.use(em, userId, id.data, this.clock.now()) : undefined;
    if (!media) throw notFound();
    return mediaRef(media);
  }

  /** Inside a start's transaction: the job carries its attachment's reference. */
  attachToJob(em: EntityManager, jobId: string, ref: MediaRef): Promise<void> {
    return this.media.attachToJob(em, jobId, ref);
  }

  /**
   * Deletes attachments no active job or holder references and nothing has used for
   * MEDIA_RETENTION_DAYS (by the injected clock): rows and objects, a batch per transaction.
   */
  async sweep(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - this.env.MEDIA_RETENTION_DAYS * DAY_MS);
    let deleted = 0;
    for (;;) {
      const batch = await this.tx.run(async (em) => {
        const expired = await this.media.expire(em, before, EXPIRE_BATCH);
        // The objects go inside the transaction: one that cannot be deleted keeps its row for the next round.
        for (const m of expired) await this.objects.delete(m.object);
        return expired.length;
      });
      deleted += batch;
      if (batch < EXPIRE_BATCH) return deleted;
    }
  }

  private async sweepQuietly(): Promise<void> {
    try {
      const deleted = await this.sweep();
      if (deleted > 0) this.logger.log({ deleted }, 'unused attachments deleted');
    } catch (err) {
      this.logger.warn({ err }, 'attachment clean-up failed; it runs again later');
    }
  }
}
