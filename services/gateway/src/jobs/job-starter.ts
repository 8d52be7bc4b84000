import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, setSha256Backend, StorageType, type ObjectStore } from '@nats-io/obj';
import {
  ErrorKind,
  JobResultsErrorCode,
  RESULTS_LIMITS,
  STAGED_START_FIELDS,
  STAGED_STARTS_BUCKET,
  startFieldsOf,
  type StartJobReply,
  type StartJobRequest,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { idempotencyKeyOf } from '../http/idempotency-key.js';

/** Tries of `jobs.start` when the jobs service does not answer in time (the key makes them safe). */
const START_TRIES = 3;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** The request without the fields a staged body carries. */
const withoutStaged = (request: StartJobRequest): StartJobRequest =>
  Object.fromEntries(
    Object.entries(request).filter(([k]) => !(STAGED_START_FIELDS as readonly string[]).includes(k)),
  ) as StartJobRequest;

/**
 * The gateway's half of a job start. Every start carries an idempotency key (the client's
 * `Idempotency-Key`, or one made here), so a start that timed out is retried and answered with the job
 * it made instead of an error: a start never reports failure for a job it created. A body too big for
 * one NATS message is staged in the JetStream object store (chunked by the store) and the request
 * carries only its name; the jobs service commits the job once, all or nothing.
 */
@Injectable()
export class JobStarter {
  private readonly logger = new Logger('JobStarter');
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {
    // The object store hashes what it stores; node's SHA-256 is many times faster than the JS default.
    setSha256Backend('native');
  }

  /** The header's key, checked; undefined when the client sent none. */
  static keyOf(header: unknown): string | undefined {
    return idempotencyKeyOf(header, JobResultsErrorCode.IdempotencyKeyInvalid);
  }

  async start(request: StartJobRequest, clientKey: string | undefined): Promise<StartJobReply> {
    const idempotencyKey = clientKey ?? `gw-${randomUUID()}`;
    // The staged body is the whole start (every start field); the request keeps all but the big ones, so a
    // jobs replica that reads only some of them from the staged body still finds the rest.
    const text = JSON.stringify(startFieldsOf(request));
    const payload: StartJobRequest =
      Buffer.byteLength(text) > RESULTS_LIMITS.stageAboveBytes
        ? { ...withoutStaged(request), idempotencyKey, staged: await this.stage(text) }
        : { ...request, idempotencyKey };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.rpc.call('jobs.start', payload, { timeoutMs: RESULTS_LIMITS.startTimeoutMs });
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== ErrorKind.Unavailable || attempt >= START_TRIES) throw err;
        this.logger.warn({ attempt }, 'jobs.start did not answer; retrying with the same idempotency key');
        await sleep(250 * attempt);
      }
    }
  }

  /**
   * Puts the body in the object store. A bucket lost with the broker (a NATS restart on an empty
   * store) is made again and the put tried once more, so one lost bucket never fails every later start.
   */
  private async stage(text: string): Promise<{ bucket: string; name: string }> {
    const name = randomUUID();
    for (let attempt = 1; ; attempt++) {
      try {
        const store = await this.objectStore();
        await store.putBlob({ name }, Buffer.from(text));
        return { bucket: STAGED_STARTS_BUCKET, name };
      } catch (err) {
        // The handle may name a bucket that is gone: the next call makes it again.
        this.store = undefined;
        if (attempt < 2) continue;
        this.logger.warn({ err }, 'could not stage a start body');
        throw AppError.unavailable();
      }
    }
  }

  private objectStore(): Promise<ObjectStore> {
    this.store ??= new Objm(this.nc)
      .create(STAGED_STARTS_BUCKET, { storage: StorageType.File, ttl: RESULTS_LIMITS.stagedTtlMs * 1_000_000 })
      .catch((err: unknown) => {
        this.store = undefined;
        throw err;
      });
    return this.store;
  }
}
