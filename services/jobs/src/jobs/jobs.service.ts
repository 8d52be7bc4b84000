import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  isUuid,
  JOB_MESSAGES,
  JobsErrorCode,
  PACING_LOG,
  parseSince,
  POLICY_MESSAGES,
  PolicyErrorCode,
  resumedByUser,
  type JobLogEntry,
  type JobRef,
  type JobStatusReply,
  type JobStatusRequest,
  type JobView,
  type PolicySetRequest,
  type SendingPolicy,
} from '@bns/contracts';
import { AppError, OutboxPublisher, SERVICE_ENV, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { commitInTime, JobJournals } from '../events/job-journal.js';
import { JobLogsRepository } from '../events/job-logs.repository.js';
import { Policies } from '../policy/policy.service.js';
import { LaneWorker } from '../queue/lane-worker.js';
import { LaneRepository } from '../queue/lane.repository.js';
import { progressOf } from '../store/job-progress.js';
import { JobsRepository, type JobSummary } from '../store/jobs.repository.js';
import { jobHeadOf, jobJsonOf, jobStatusVersion, type JobHead } from './job-view.js';

/** A started job's life: pause, resume, cancel, its status and logs, and the account's sending policy. The start is `JobStarts`'. */
@Injectable()
export class JobsService {
  constructor(
    private readonly tx: Transactions,
    private readonly jobs: JobsRepository,
    private readonly logLines: JobLogsRepository,
    private readonly lanes: LaneRepository,
    private readonly journals: JobJournals,
    private readonly policies: Policies,
    private readonly outbox: OutboxPublisher,
    private readonly worker: LaneWorker,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  /** Stops sending for the job until the user resumes it; a send in flight is still recorded. */
  async pause({ userId, jobId }: JobRef): Promise<{ job: JobView }> {
    const published = await this.tx.run(async (em) => {
      const job = await this.find(em, userId, jobId, true);
      if (job.status === 'paused' && job.pausedReason === 'user') {
        throw AppError.conflict(PolicyErrorCode.NotPausable, POLICY_MESSAGES.alreadyPaused, { status: job.status });
      }
      if (!['queued', 'scheduled', 'running', 'paused'].includes(job.status)) {
        throw AppError.conflict(PolicyErrorCode.NotPausable, POLICY_MESSAGES.notPausable, { status: job.status });
      }
      await this.jobs.pause(em, jobId, 'user', null);
      const journal = this.journals.open(em, userId);
      await journal.log(jobId, 'warning', PACING_LOG.pausedByUser);
      journal.progress(jobId, 'paused', progressOf(job));
      return commitInTime(journal);
    });
    this.outbox.publish(published);
    return { job: await this.view(this.tx.manager, userId, jobId) };
  }

  /** Goes on where the job stopped: it takes its place again in the account's lane. */
  async resume({ userId, jobId }: JobRef): Promise<{ job: JobView }> {
    const published = await this.tx.run(async (em) => {
      const job = await this.find(em, userId, jobId, true);
      // A job WhatsApp's refusals paused waits for the user, like one the user paused.
      if (job.status === 'paused' && !resumedByUser(job.pausedReason)) {
        throw AppError.conflict(PolicyErrorCode.NotPaused, POLICY_MESSAGES.resumesByItself, {
          status: job.status,
          pausedReason: job.pausedReason,
        });
      }
      if (job.status !== 'paused')
        throw AppError.conflict(PolicyErrorCode.NotPaused, POLICY_MESSAGES.notPaused, { status: job.status });
      await this.lanes.wake(em, userId);
      await this.jobs.resume(em, jobId);
      const journal = this.journals.open(em, userId);
      await journal.log(jobId, 'info', PACING_LOG.resumedByUser);
      const after = await this.find(em, userId, jobId);
      journal.progress(jobId, after.status, progressOf(job));
      // Sending must not start again on a resume the user was answered 503 for.
      return commitInTime(journal);
    });
    this.outbox.publish(published);
    await this.worker.kickSoon(userId);
    return { job: await this.view(this.tx.manager, userId, jobId) };
  }

  async getPolicy({ userId }: { userId: string }): Promise<{ policy: SendingPolicy }> {
    return { policy: await this.policies.of(this.tx.manager, userId) };
  }

  /** Stores the update; it applies from the account's next message (a sleeping lane looks again now). */
  async setPolicy({ userId, policy }: PolicySetRequest): Promise<{ policy: SendingPolicy }> {
    const saved = await this.tx.run(async (em) => {
      const next = await this.policies.update(em, userId, policy);
      await this.lanes.wake(em, userId);
      return next;
    });
    await this.worker.kickSoon(userId);
    return { policy: saved };
  }

  /**
   * The job with its version; only the version when one the client has (`ifNoneMatch`) is still
   * current: then the answer costs the one indexed read of the job row, which also checks
   * the job is the user's, so another user's job is "not found" whatever the client claims to have.
   */
  async status({ userId, jobId, ifNoneMatch }: JobStatusRequest): Promise<JobStatusReply> {
    if (ifNoneMatch) {
      const version = jobStatusVersion(
        userId,
        jobHeadOf(await this.find(this.tx.manager, userId, jobId)),
        this.env.JOB_STATUS_LIST_MAX,
      );
      if (ifNoneMatch.some((v) => v === '*' || v === version)) return { notModified: true, version };
    }
    // The head and its lists from one statement, so one snapshot: a send recorded between two reads
    // would otherwise put a list a step ahead of the counts the version stands for (one version, two
    // answers). One round trip, for a found job and an unknown one alike.
    const { jobJson, head } = await this.answerOf(this.tx.manager, userId, jobId);
    return { jobJson, version: jobStatusVersion(userId, head, this.env.JOB_STATUS_LIST_MAX) };
  }

  /** Entries strictly after `since`, oldest first, a page at a time (the next poll's `since` continues). */
  async logs({ userId, jobId, since }: JobRef & { since?: string }): Promise<{ logs: JobLogEntry[] }> {
    const after = parseSince(since);
    if (after === null) throw AppError.validation(JobsErrorCode.InvalidSince, JOB_MESSAGES.invalidSince);
    checkJobId(jobId);
    const limit = this.env.JOB_LOGS_PAGE_MAX;
    // The ownership check and the page in one statement.
    const rows = await this.logLines.pageOwned(this.tx.manager, userId, jobId, after ?? new Date(0), limit);
    if (!rows) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    // A full page must not end inside a run of equal timestamps, or `since` would skip the rest of it.
    if (rows.length === limit) {
      const last = rows[rows.length - 1]!.at.getTime();
      const cut = rows.findIndex((r) => r.at.getTime() === last);
      if (cut > 0) rows.length = cut;
    }
    return { logs: rows.map((r) => ({ type: r.type, message: r.message, timestamp: r.at.toISOString() })) };
  }

  /** Stops the job before its next send; a send already in flight is still recorded. */
  async cancel({ userId, jobId }: JobRef): Promise<{ job: JobView }> {
    const published = await this.tx.run(async (em) => {
      const job = await this.find(em, userId, jobId, true);
      if (job.status === 'cancelled') return [];
      if (job.status === 'completed' || job.status === 'failed') {
        throw AppError.conflict(JobsErrorCode.AlreadyFinished, JOB_MESSAGES.alreadyFinished, { status: job.status });
      }
      await this.jobs.cancel(em, jobId);
      const journal = this.journals.open(em, userId);
      await journal.log(jobId, 'warning', JOB_MESSAGES.jobCancelled);
      journal.progress(jobId, 'cancelled', progressOf(job));
      return journal.commit();
    });
    this.outbox.publish(published);
    return { job: await this.view(this.tx.manager, userId, jobId) };
  }

  /** Another user's job, and an id that is not a job id at all, are both simply not found. */
  private async find(em: EntityManager, userId: string, jobId: string, lock = false): Promise<JobSummary> {
    checkJobId(jobId);
    const job = await this.jobs.findOwned(em, userId, jobId, lock);
    if (!job) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    return job;
  }

  private async view(em: EntityManager, userId: string, jobId: string): Promise<JobView> {
    return JSON.parse((await this.answerOf(em, userId, jobId)).jobJson) as JobView;
  }

  /**
   * The job as the status answer's JSON text, with its result lists (the newest JOB_STATUS_LIST_MAX of
   * each, oldest first) as Postgres wrote them, read in one statement; and the head its version is of.
   */
  private async answerOf(
    em: EntityManager,
    userId: string,
    jobId: string,
  ): Promise<{ jobJson: string; head: JobHead }> {
    checkJobId(jobId);
    const found = await this.jobs.statusOf(em, userId, jobId, this.env.JOB_STATUS_LIST_MAX);
    if (!found) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    const { resultsJson, ...summary } = found;
    const head = jobHeadOf(summary);
    return { jobJson: jobJsonOf(head, resultsJson), head };
  }
}

/** A job id that is not a UUID names no job: "not found", like another user's job, before any query. */
function checkJobId(jobId: unknown): asserts jobId is string {
  if (!isUuid(jobId)) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
}
