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
 * Which job ids name no job of a user, known from the id alone (service-kit `JobIdScheme`, issue 17):
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

  constructor(private readonly rpc: RpcClient) {}

  onApplicationBootstrap(): void {
    void this.load();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Whether the scheme is known (the check answers from ids alone). */
  get ready(): boolean {
    return this.scheme !== undefined;
  }

  /** False when `jobId` certainly names no job of `userId`; true when it may (the jobs service decides). */
  mayExist(userId: string, jobId: string): boolean {
    if (!isUuid(jobId)) return false;
    return this.scheme === undefined || jobMayExist(this.scheme, userId, jobId);
  }

  /**
   * `mayExist`, counted: false is a refusal the caller answers 404 (`bns_gateway_job_ids_refused_total`).
   */
  admits(userId: string, jobId: string): boolean {
    if (this.mayExist(userId, jobId)) return true;
    countJobIdRefused();
    return false;
  }

  /** Throws the jobs service's own "not found" for an id that names no job of `userId`. */
  check(userId: string, jobId: string): void {
    if (!this.admits(userId, jobId)) throw jobNotFound();
  }

  private async load(): Promise<void> {
    let next = RETRY_MS;
    try {
      const { key, legacyIds } = await this.rpc.call('jobs.idScheme', {});
      const known = this.scheme === undefined;
      this.scheme = { key: Buffer.from(key, 'base64'), legacyIds };
      if (known) this.logger.log({ legacyIds }, 'job ids are checked here');
      next = REFRESH_MS;
    } catch {
      // The jobs service is not up yet (or NATS is away): the jobs service answers every id meanwhile.
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.load(), next).unref();
  }
}
