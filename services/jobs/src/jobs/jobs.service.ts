import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  isUuid,
  checkStartAt,
  checkStartJob,
  estimateSend,
  formatLocal,
  JOB_MESSAGES,
  JobsErrorCode,
  OPT_OUT_MESSAGES,
  PACING_LOG,
  parseSince,
  pickVariation,
  POLICY_MESSAGES,
  PolicyErrorCode,
  variantCount,
  type JobLogEntry,
  type JobRef,
  type JobStatusReply,
  type JobStatusRequest,
  type JobView,
  type PolicySetRequest,
  type SendingPolicy,
  type SkipReason,
  type StartJobReply,
  type StartJobRequest,
} from '@bns/contracts';
import { AppError, OutboxPublisher, rpcDeadlinePassed, RpcClient, SERVICE_ENV, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { JobJournals, type JobJournal, type OutboxRow } from '../events/job-journal.js';
import { LaneRepository } from '../queue/lane.repository.js';
import { LaneStepRepository } from '../queue/lane-step.repository.js';
import { LaneWorker } from '../queue/lane-worker.js';
import { progressOf } from '../store/job-progress.js';
import { countSkipped } from '../metrics/jobs.metrics.js';
import { OptOutsRepository } from '../optouts/opt-outs.repository.js';
import { JobIds } from '../store/job-ids.js';
import { JobLogsRepository } from '../events/job-logs.repository.js';
import { jobHeadOf, jobJsonOf, jobStatusVersion, type JobHead } from './job-view.js';
import { JobsRepository, type JobSummary } from '../store/jobs.repository.js';
import { Policies } from '../policy/policy.service.js';
import { RecipientsRepository } from '../store/recipients.repository.js';
import { StartGuard, type StartAdmission } from '../results/start-guard.js';

/** States of `sessions.status` in which the account can send. */
const LINKED_STATES = new Set(['ready', 'exist']);

/**
 * Writes the journal and lets the transaction commit only while its caller still waits: when the
 * gateway gave up on the request (Postgres or a queue held it past the deadline), it answered 503, so
 * the change (a start, a pause, a resume) must not happen now; throwing rolls it back.
 */
async function commitInTime(journal: JobJournal): Promise<OutboxRow[]> {
  const published = await journal.commit();
  if (rpcDeadlinePassed()) throw AppError.unavailable();
  return published;
}

@Injectable()
export class JobsService {
  private readonly logger = new Logger('JobsService');

  constructor(
    private readonly tx: Transactions,
    private readonly jobs: JobsRepository,
    private readonly recipients: RecipientsRepository,
    private readonly logLines: JobLogsRepository,
    private readonly lanes: LaneRepository,
    private readonly steps: LaneStepRepository,
    private readonly journals: JobJournals,
    private readonly policies: Policies,
    private readonly rpc: RpcClient,
    private readonly outbox: OutboxPublisher,
    private readonly worker: LaneWorker,
    private readonly guard: StartGuard,
    private readonly optOuts: OptOutsRepository,
    private readonly ids: JobIds,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  /** The guard reads a staged body, runs a user's starts one at a time and replays a known key. */
  start(req: StartJobRequest): Promise<StartJobReply> {
    return this.guard.run(req, (body, admission) => this.create(body, admission));
  }

  /**
   * Checks the request (SPEC §5 words), checks the account is linked, then stores the job and all its
   * recipients in one transaction. Recipients on the account's opt-out list, or remembered not on
   * WhatsApp, are recorded as skipped in that transaction and never queued. The user's lane
   * is reactivated; the job queues behind a running one.
   */
  private async create(req: StartJobRequest, admission: StartAdmission): Promise<StartJobReply> {
    const check = checkStartJob(req, { maxRecipients: this.env.MAX_RECIPIENTS_PER_JOB });
    if (!check.ok) throw AppError.validation(check.code, check.message, undefined, check.details);

    const link = await this.rpc.call('sessions.status', { userId: req.userId });
    if (!LINKED_STATES.has(link.state)) throw AppError.conflict(JobsErrorCode.NotLinked, JOB_MESSAGES.notLinked, { state: link.state });

    const when = checkStartAt(req.startAt);
    if (!when.ok) throw AppError.validation(PolicyErrorCode.InvalidStartAt, when.message, { startAt: when.message });
    const startAt = when.startAt ?? null;

    const jobId = await this.ids.mint(req.userId);
    const total = check.recipients.length;
    const message = req.message as string;
    const clientId = typeof req.clientId === 'string' ? req.clientId.slice(0, 200) : null;
    // {Hello|Hi|Hey}: one option per recipient, chosen from job + number and stored, so a resend after a crash is the same text.
    const varied = variantCount(message) > 1;
    const status = startAt ? 'scheduled' : 'queued';
    let estimate!: { estimatedTime: number; estimatedFinishAt: Date };
    let skips = new Map<string, SkipReason>();
    const published = await this.tx.run(async (em) => {
      // The lane first: it serialises this user's starts with the worker's "no more work" decision.
      await this.lanes.activate(em, req.userId, startAt);
      await admission.admit(em, jobId, total);
      const ahead = await this.jobs.countAhead(em, req.userId);
      const policy = await this.policies.of(em, req.userId);
      const counters = await this.lanes.counters(em, req.userId);
      // Opted-out and not-on-WhatsApp recipients are skipped: recorded, not queued.
      skips = await this.steps.suppressedAmong(em, req.userId, check.recipients.map((r) => r.phone), this.env.NOT_ON_WHATSAPP_MEMORY_DAYS);
      const queued = skips.size === 0 ? check.recipients : check.recipients.filter((r) => !skips.has(r.phone));
      const texts = check.personalised || varied ? queued.map((r) => (varied ? pickVariation(r.text, `${jobId}:${r.phone}`) : r.text)) : [];
      estimate = estimateSend(queued.length, policy, { startAt: startAt ?? undefined, counters });
      await this.jobs.insert(em, {
        id: jobId,
        userId: req.userId,
        clientId,
        message,
        total,
        delayMs: policy.delayMs,
        estimatedMinutes: estimate.estimatedTime,
        status,
        startAt,
        estimatedFinishAt: estimate.estimatedFinishAt,
        skipped: skips.size,
        // Only a one-message job may go ahead of the account's campaigns.
        transactional: req.transactional === true && total === 1,
      });
      await this.optOuts.recordSkips(em, jobId, skips);
      await this.recipients.insertAll(
        em,
        jobId,
        queued.map((r) => r.phone),
        texts,
      );
      await admission.variables(em, jobId, queued);
      const journal = this.journals.open(em, req.userId);
      if (startAt) await journal.log(jobId, 'info', PACING_LOG.scheduled(formatLocal(startAt, policy.timeZone)));
      else if (ahead > 0) await journal.log(jobId, 'info', JOB_MESSAGES.jobQueued);
      // One log line says how many were skipped and why.
      if (skips.size > 0) await journal.log(jobId, 'warning', OPT_OUT_MESSAGES.skippedAtStart(...countReasons(skips)));
      journal.progress(jobId, status, progressOf({ total, sent: 0, failed: 0, skipped: skips.size }));
      // A retry with the same key starts it, if the gateway gave up on this one.
      return commitInTime(journal);
    });
    this.outbox.publish(published);
    countSkipped(skips.values());
    const [optedOut, notOnWhatsApp] = countReasons(skips);
    this.logger.log(
      { jobId, userId: req.userId, total, personalised: check.personalised, scheduled: startAt !== null, skippedOptedOut: optedOut, skippedNotOnWhatsApp: notOnWhatsApp },
      'job accepted',
    );
    await this.kick(req.userId);
    return { jobId, estimatedTime: estimate.estimatedTime, estimatedFinishAt: estimate.estimatedFinishAt.toISOString(), status, total };
  }

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
      if (job.status === 'paused' && job.pausedReason !== 'user') {
        throw AppError.conflict(PolicyErrorCode.NotPaused, POLICY_MESSAGES.resumesByItself, { status: job.status, pausedReason: job.pausedReason });
      }
      if (job.status !== 'paused') throw AppError.conflict(PolicyErrorCode.NotPaused, POLICY_MESSAGES.notPaused, { status: job.status });
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
    await this.kick(userId);
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
    await this.kick(userId);
    return { policy: saved };
  }

  private async kick(userId: string): Promise<void> {
    await this.worker.kick(userId).catch((err: unknown) => this.logger.warn({ err }, 'kick failed; the next poll takes the lane'));
  }

  /**
   * The job with its version; only the version when one the client has (`ifNoneMatch`) is still
   * current: then the answer costs the one indexed read of the job row, which also checks
   * the job is the user's, so another user's job is "not found" whatever the client claims to have.
   */
  async status({ userId, jobId, ifNoneMatch }: JobStatusRequest): Promise<JobStatusReply> {
    if (ifNoneMatch) {
      const version = jobStatusVersion(userId, jobHeadOf(await this.find(this.tx.manager, userId, jobId)), this.env.JOB_STATUS_LIST_MAX);
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
  private async answerOf(em: EntityManager, userId: string, jobId: string): Promise<{ jobJson: string; head: JobHead }> {
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

/** How many were skipped for each reason, for the start's log line. */
function countReasons(skips: ReadonlyMap<string, SkipReason>): [optedOut: number, notOnWhatsApp: number] {
  let optedOut = 0;
  for (const reason of skips.values()) if (reason === 'opted_out') optedOut++;
  return [optedOut, skips.size - optedOut];
}
