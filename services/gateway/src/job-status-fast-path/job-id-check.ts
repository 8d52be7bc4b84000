import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { isUuid, JOB_MESSAGES, JobsErrorCode } from '@bns/contracts';
import { AppError, jobMayExist, RpcClient, type JobIdScheme } from '@bns/service-kit';
import { countJobIdRefused } from '../metrics/gateway.metrics.js';

/** What the jobs service answers for a job the user does not have. */
export const jobNotFound = () => AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);

/** Until the jobs service has answered, asked again this often. */
const RETRY_MS = 2_000;
/** Once known, asked again this often (the scheme is fixed by a migration; this only bounds a restore's effect). */
const REFRESH_MS = 10 * 60_000;
/**
 * A refused UUID may mean the scheme changed under this replica (a database restored or replaced): it is
 * asked again then, at most this often, so a replica with a stale key serves the new one's jobs within
 * that time, and made-up ids cost the jobs service one request per this time at most.
 */
const RECHECK_AFTER_REFUSAL_MS = 30_000;

/**
 * Which job ids name no job of a user, known from the id alone (service-kit `JobIdScheme`):
 * a poll of a made-up, mistyped or another user's job id is answered "not found" here, with no NATS
 * round trip and no database read, just as the jobs service would answer it. Until the jobs service has
 * said how its ids are made, only ids that are no UUID at all are known to name nothing.
 */
@Injectable()
export class JobIdCheck implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('JobIdCheck');
  private scheme?: JobIdScheme;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private loading = false;
  /** `performance.now()` of the last time the jobs service was asked. */
  private askedAt = -Infinity;
  /** How soon after the last ask a refused UUID asks again (RECHECK_AFTER_REFUSAL_MS; tests shorten it). */
  recheckAfterRefusalMs = RECHECK_AFTER_REFUSAL_MS;

  constructor(private readonly rpc: RpcClient) {}

  onApplicationBootstrap(): void {
    void this.load();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** False when `jobId` certainly names no job of `userId`; true when it may (the jobs service decides). */
  mayExist(userId: string, jobId: string): boolean {
    if (this.scheme === undefined) return isUuid(jobId);
    if (jobMayExist(this.scheme, userId, jobId)) return true;
    if (
      isUuid(jobId) &&
      !this.loading &&
      !this.stopped &&
      performance.now() - this.askedAt >= this.recheckAfterRefusalMs
    ) {
      clearTimeout(this.timer);
      void this.load();
    }
    return false;
  }

  /** Throws the jobs service's own "not found" for an id that names no job of `userId` (counted: `bns_gateway_job_ids_refused_total`). */
  check(userId: string, jobId: string): void {
    if (this.mayExist(userId, jobId)) return;
    countJobIdRefused();
    throw jobNotFound();
  }

  private async load(): Promise<void> {
    let next = RETRY_MS;
    this.loading = true;
    this.askedAt = performance.now();
    try {
      const { key, legacyIds } = await this.rpc.call('jobs.idScheme', {});
      const scheme = { key: Buffer.from(key, 'base64'), legacyIds };
      if (this.scheme === undefined || !this.scheme.key.equals(scheme.key) || this.scheme.legacyIds !== legacyIds) {
        this.logger.log({ legacyIds, changed: this.scheme !== undefined }, 'job ids are checked here');
      }
      this.scheme = scheme;
      next = REFRESH_MS;
    } catch {
      // The jobs service is not up yet (or NATS is away): the jobs service answers every id meanwhile.
    } finally {
      this.loading = false;
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.load(), next).unref();
  }
}
