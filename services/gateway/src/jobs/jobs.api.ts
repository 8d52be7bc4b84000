import { Injectable } from '@nestjs/common';
import { parseSince, startFieldsOf, type Infer, type JobLogsQuerySchema, type StartJobFields } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import { JobIdCheck, JobStatusCache } from '../job-status-fast-path/index.js';
import { JobStarter } from './job-starter.js';

/** The job calls of SPEC §7 (start, pacing, logs, cancel, pause, resume), answered by the jobs service over NATS. */
@Injectable()
export class JobsApi {
  constructor(
    private readonly rpc: RpcClient,
    private readonly starter: JobStarter,
    private readonly statusCache: JobStatusCache,
    private readonly ids: JobIdCheck,
  ) {}

  async start(userId: string, body: StartJobFields, idempotencyKeyHeader: unknown) {
    // Every start field as the schema lists them (the jobs service checks them all); the user is the token's.
    const request = { userId, ...startFieldsOf(body) };
    // The idempotency key, staging of big bodies and retries are the starter's.
    const { jobId, estimatedTime } = await this.starter.start(request, JobStarter.keyOf(idempotencyKeyHeader));
    return { success: true, jobId, estimatedTime };
  }

  async pacing(userId: string) {
    return { success: true, ...(await this.rpc.call('jobs.pacing', { userId })) };
  }

  async logs(userId: string, jobId: string, query: Infer<typeof JobLogsQuerySchema>) {
    // A bad `since` is the jobs service's to refuse first, as it would.
    if (parseSince(query.since) !== null) this.ids.check(userId, jobId);
    const { logs } = await this.rpc.call('jobs.logs', {
      userId,
      jobId,
      ...(query.since !== undefined ? { since: query.since } : {}),
    });
    return { success: true, logs };
  }

  cancel(userId: string, jobId: string) {
    return this.change('jobs.cancel', userId, jobId);
  }

  pause(userId: string, jobId: string) {
    return this.change('jobs.pause', userId, jobId);
  }

  resume(userId: string, jobId: string) {
    return this.change('jobs.resume', userId, jobId);
  }

  /** A change of the user's job: the user's next poll on this replica asks the jobs service (JobStatusCache.changing). */
  private async change(subject: 'jobs.cancel' | 'jobs.pause' | 'jobs.resume', userId: string, jobId: string) {
    this.ids.check(userId, jobId);
    const { job } = await this.statusCache.changing(userId, this.rpc.call(subject, { userId, jobId }));
    return { success: true, job };
  }
}
