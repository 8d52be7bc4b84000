import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
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
import { StagedBodies } from '../http/staged-bodies.js';

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
  private readonly staged: StagedBodies;

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) nc: NatsConnection,
  ) {
    this.staged = new StagedBodies(nc, STAGED_STARTS_BUCKET, RESULTS_LIMITS.stagedTtlMs);
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
        ? { ...withoutStaged(request), idempotencyKey, staged: await this.staged.put(text) }
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
}
