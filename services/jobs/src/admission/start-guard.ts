import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import type { EntityManager } from 'typeorm';
import {
  CommonErrorCode,
  ErrorKind,
  JobResultsErrorCode,
  RESULTS_LIMITS,
  REQUEST_MESSAGES,
  RESULTS_MESSAGES,
  startFieldsOf,
  type StartJobReply,
  type StagedBodyRef,
  type StartJobRequest,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, SERVICE_ENV, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { AdmissionRepository, type AdmissionReads } from './admission.repository.js';

/** What `create` is handed to call inside its transaction. */
export interface StartAdmission {
  /**
   * Claims the idempotency key and reads what the start needs (`AdmissionRepository.admit`), in one
   * statement; call right after the lane is locked. `judge` then says whether it may go ahead.
   */
  admit(em: EntityManager, jobId: string, phones: readonly string[]): Promise<AdmissionReads>;
  /** Another start took the key (this one replays it), or the user's caps refuse `total` more (429). */
  judge(reads: AdmissionReads, total: number): void;
}

/** Another start with the same key won the race: this transaction rolls back and replays that one. */
class KeyTaken extends Error {}

/**
 * What surrounds a job start: the body of a staged start is read back from the object
 * store; a user's starts run one at a time and at most JOBS_START_CONCURRENCY run in all, so a burst
 * of one user queues behind itself and leaves connections for everyone else; an `Idempotency-Key`
 * seen before answers the job it made (or 409 for another body), enforced by the primary key of
 * `job_starts` inside the start's own transaction; the per-user caps answer 429.
 */
@Injectable()
export class StartGuard {
  private readonly logger = new Logger('StartGuard');
  private readonly users = new Map<string, { tail: Promise<unknown>; waiting: number }>();
  private readonly keysInProgress = new Map<string, Promise<unknown>>();
  private running = 0;
  private readonly slotWaiters: Array<() => void> = [];
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly tx: Transactions,
    private readonly starts: AdmissionRepository,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    // The object store checks a staged body's SHA-256; node's is many times faster than the JS default.
    setSha256Backend('native');
  }

  async run(
    req: StartJobRequest,
    create: (body: StartJobRequest, admission: StartAdmission) => Promise<StartJobReply>,
    arrived = Date.now(),
  ): Promise<StartJobReply> {
    // A duplicate of a start still in progress here waits for it and is then answered by replay; it
    // does not take a place in the user's queue meanwhile.
    const sameKey = req.idempotencyKey ? `${req.userId}\n${req.idempotencyKey}` : undefined;
    const ahead = sameKey ? this.keysInProgress.get(sameKey) : undefined;
    if (ahead) {
      await ahead.catch(() => undefined);
      return this.run(req, create, arrived);
    }
    const done = this.attempt(req, create, arrived);
    if (sameKey) {
      this.keysInProgress.set(sameKey, done);
      void done.catch(() => undefined).finally(() => this.keysInProgress.delete(sameKey));
    }
    return done;
  }

  private attempt(
    req: StartJobRequest,
    create: (body: StartJobRequest, admission: StartAdmission) => Promise<StartJobReply>,
    arrived: number,
  ): Promise<StartJobReply> {
    return this.serialised(req.userId, async () => {
      // Waited so long that storing might outlast the gateway's patience: then the job would exist and
      // the caller be told it failed. Dropped instead; the gateway's retry carries the same key.
      if (Date.now() - arrived > RESULTS_LIMITS.startTimeoutMs / 2) throw AppError.unavailable();
      const began = Date.now();
      const body = req.staged ? await this.readStaged(req) : req;
      const read = Date.now();
      try {
        const key = req.idempotencyKey;
        if (!body) {
          // The staged body is gone: an earlier attempt of this same gateway request (staged names are
          // never reused) consumed it, so the job it made is the answer.
          const earlier = key ? await this.replay(req.userId, key) : undefined;
          if (earlier) return earlier;
          throw AppError.validation(JobResultsErrorCode.StagedBodyMissing, RESULTS_MESSAGES.stagedBodyMissing);
        }
        if (!key) return await create(body, this.admission(req.userId));
        const hash = requestHash(body);
        const earlier = await this.replay(req.userId, key, hash);
        if (earlier) return earlier;
        try {
          const created = await create(body, this.admission(req.userId, key, hash));
          this.logger.log(
            { queuedMs: began - arrived, readMs: read - began, storeMs: Date.now() - read, staged: !!req.staged },
            'start timings',
          );
          return created;
        } catch (err) {
          if (!(err instanceof KeyTaken)) throw err;
          return (await this.replay(req.userId, key, hash))!;
        }
      } finally {
        if (req.staged) void this.dropStaged(req.staged);
      }
    });
  }

  private admission(userId: string, key?: string, hash?: string): StartAdmission {
    return {
      admit: (em, jobId, phones) =>
        this.starts.admit(em, {
          userId,
          jobId,
          key: key ?? null,
          requestHash: hash ?? null,
          phones,
          notOnWhatsAppDays: this.env.NOT_ON_WHATSAPP_MEMORY_DAYS,
        }),
      judge: (reads, total) => {
        if (!reads.claimed) throw new KeyTaken();
        this.checkCaps(reads.inFlight, total);
      },
    };
  }

  /** The job an earlier start with this key made; 409 when that start had another body. */
  private async replay(userId: string, key: string, hash?: string): Promise<StartJobReply | undefined> {
    const earlier = await this.starts.findStart(this.tx.manager, userId, key);
    if (!earlier) return undefined;
    if (hash !== undefined && earlier.requestHash !== hash) {
      throw AppError.conflict(JobResultsErrorCode.IdempotencyKeyReused, RESULTS_MESSAGES.idempotencyKeyReused);
    }
    return {
      jobId: earlier.id,
      estimatedTime: earlier.estimatedMinutes,
      estimatedFinishAt: (earlier.estimatedFinishAt ?? new Date()).toISOString(),
      status: earlier.status as StartJobReply['status'],
      total: earlier.total,
      replayed: true,
    };
  }

  /** `now` was read under the user's lane lock, so two starts of one user cannot both pass. */
  private checkCaps(now: AdmissionReads['inFlight'], total: number): void {
    const maxJobs = this.env.JOBS_MAX_ACTIVE_PER_USER;
    const maxQueued = this.env.JOBS_MAX_QUEUED_RECIPIENTS_PER_USER;
    if (now.jobs >= maxJobs) {
      throw new AppError(
        ErrorKind.RateLimited,
        JobResultsErrorCode.TooManyActiveJobs,
        RESULTS_MESSAGES.tooManyActiveJobs(maxJobs),
        {
          details: { maxActiveJobs: maxJobs, activeJobs: now.jobs },
        },
      );
    }
    if (now.recipients + total > maxQueued) {
      throw new AppError(
        ErrorKind.RateLimited,
        JobResultsErrorCode.TooManyQueuedRecipients,
        RESULTS_MESSAGES.tooManyQueuedRecipients(maxQueued, now.recipients),
        {
          details: { maxQueuedRecipients: maxQueued, queuedRecipients: now.recipients },
        },
      );
    }
  }

  /**
   * One user's starts in arrival order, and a bounded number in all. A user with more starts waiting
   * here than they may have active jobs is answered at once: those could not all be accepted anyway.
   */
  private async serialised<T>(userId: string, work: () => Promise<T>): Promise<T> {
    const lane = this.users.get(userId) ?? { tail: Promise.resolve(), waiting: 0 };
    if (lane.waiting >= this.env.JOBS_MAX_ACTIVE_PER_USER) {
      const max = this.env.JOBS_MAX_ACTIVE_PER_USER;
      throw new AppError(
        ErrorKind.RateLimited,
        JobResultsErrorCode.TooManyActiveJobs,
        RESULTS_MESSAGES.tooManyActiveJobs(max),
        {
          details: { maxActiveJobs: max, retryAfterSeconds: 1 },
        },
      );
    }
    lane.waiting += 1;
    this.users.set(userId, lane);
    const mine = lane.tail.then(async () => {
      await this.slot();
      try {
        return await work();
      } finally {
        this.release();
      }
    });
    lane.tail = mine.catch(() => undefined);
    try {
      return await mine;
    } finally {
      lane.waiting -= 1;
      if (lane.waiting === 0) this.users.delete(userId);
    }
  }

  private async slot(): Promise<void> {
    if (this.running < this.env.JOBS_START_CONCURRENCY) {
      this.running += 1;
      return;
    }
    await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private release(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.running -= 1;
  }

  private objectStore(bucket: string): Promise<ObjectStore> {
    this.store ??= new Objm(this.nc).open(bucket).catch((err: unknown) => {
      this.store = undefined;
      throw err;
    });
    return this.store;
  }

  /** The start the gateway staged, with the request's own fields; the user is the request's. */
  private async readStaged(req: StartJobRequest): Promise<StartJobRequest | undefined> {
    const { bucket, name } = req.staged!;
    let bytes: Uint8Array | null;
    try {
      bytes = await (await this.objectStore(bucket)).getBlob(name);
    } catch (err) {
      this.logger.warn({ err }, 'could not read a staged start body');
      throw AppError.unavailable();
    }
    if (!bytes) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    } catch {
      throw AppError.validation(CommonErrorCode.BadRequest, REQUEST_MESSAGES.invalidJson);
    }
    const body = typeof parsed === 'object' && parsed !== null ? parsed : {};
    // The start fields the request carried, and over them those of the staged body (the whole start; a
    // gateway of an earlier version staged only the big ones and `clientId`). The user is the request's.
    const { staged: _staged, ...inline } = req;
    return { ...inline, ...startFieldsOf(body) };
  }

  private async dropStaged({ bucket, name }: StagedBodyRef): Promise<void> {
    try {
      await (await this.objectStore(bucket)).delete(name);
    } catch (err) {
      // It expires on its own (RESULTS_LIMITS.stagedTtlMs).
      this.logger.warn({ err }, 'could not delete a staged start body');
    }
  }
}

/** The same message and recipients, in the same order, hash the same; clientId and the user do not count. */
export function requestHash(body: Pick<StartJobRequest, 'message' | 'phoneNumbers' | 'recipients'>): string {
  return createHash('sha256')
    .update(JSON.stringify([body.message ?? null, body.phoneNumbers ?? null, body.recipients ?? null]))
    .digest('base64url');
}
