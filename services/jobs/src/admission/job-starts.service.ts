import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  checkStartAt,
  checkStartJob,
  estimateSend,
  formatLocal,
  JOB_MESSAGES,
  JobsErrorCode,
  OPT_OUT_MESSAGES,
  PACING_LOG,
  pickVariation,
  PolicyErrorCode,
  variantCount,
  type SkipReason,
  type StartJobReply,
  type StartJobRequest,
} from '@bns/contracts';
import {
  AppError,
  CollectionSoon,
  fullCollection,
  OutboxPublisher,
  RpcClient,
  SERVICE_ENV,
  Transactions,
  type CollectionSoonOptions,
} from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { commitInTime, JobJournals } from '../events/job-journal.js';
import { countSkipped } from '../metrics/jobs.metrics.js';
import { OptOutsRepository } from '../optouts/opt-outs.repository.js';
import { Policies } from '../policy/policy.service.js';
import { LaneWorker } from '../queue/lane-worker.js';
import { LaneRepository } from '../queue/lane.repository.js';
import { MediaLibrary } from '../media/media.service.js';
import { JobIds } from '../store/job-ids.js';
import { progressOf } from '../store/job-progress.js';
import { JobsRepository } from '../store/jobs.repository.js';
import { StartGuard, type StartAdmission } from './start-guard.js';

/**
 * After starts whose body was staged (too big for one NATS message: tens of thousands of rows), one full
 * garbage collection once starts stop for a while, at most once every 30 s: an idle process rarely runs
 * one, so the memory such a start took stayed in the RSS (docs/benchmarks.md, accept-50k).
 */
const COLLECT_AFTER_STAGED: CollectionSoonOptions = { quietMs: 5_000, intervalMs: 30_000 };

/** States of `sessions.status` in which the account can send. */
const LINKED_STATES = new Set(['ready', 'exist']);

/** A job's start (`jobs.start`): what is checked, what is stored, and the lane it wakes. */
@Injectable()
export class JobStarts implements OnModuleDestroy {
  private readonly logger = new Logger('JobStarts');
  private readonly memory?: CollectionSoon;

  constructor(
    private readonly tx: Transactions,
    private readonly jobs: JobsRepository,
    private readonly lanes: LaneRepository,
    private readonly journals: JobJournals,
    private readonly policies: Policies,
    private readonly rpc: RpcClient,
    private readonly outbox: OutboxPublisher,
    private readonly worker: LaneWorker,
    private readonly guard: StartGuard,
    private readonly optOuts: OptOutsRepository,
    private readonly ids: JobIds,
    private readonly media: MediaLibrary,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    const collect = fullCollection();
    if (collect)
      this.memory = new CollectionSoon(collect, COLLECT_AFTER_STAGED, (tookMs) =>
        this.logger.log({ tookMs: Math.round(tookMs) }, 'large starts done: a full garbage collection ran'),
      );
  }

  onModuleDestroy(): void {
    this.memory?.stop();
  }

  /** The guard reads a staged body, runs a user's starts one at a time and replays a known key. */
  async start(req: StartJobRequest): Promise<StartJobReply> {
    try {
      return await this.guard.run(req, (body, admission) => this.create(body, admission));
    } finally {
      if (req.staged) this.memory?.request();
    }
  }

  /**
   * Checks the request (SPEC §5 words), checks the account is linked, then stores the job and all its
   * recipients in one transaction. Recipients on the account's opt-out list, or remembered not on
   * WhatsApp, are recorded as skipped in that transaction and never queued. The user's lane
   * is reactivated; the job queues behind a running one.
   */
  private async create(req: StartJobRequest, admission: StartAdmission): Promise<StartJobReply> {
    // An attachment that is not the user's is "not found" before anything else is said about the start.
    const attached =
      req.mediaId === undefined || req.mediaId === null ? undefined : await this.media.find(req.userId, req.mediaId);
    const check = checkStartJob(req, { maxRecipients: this.env.MAX_RECIPIENTS_PER_JOB });
    if (!check.ok) throw AppError.validation(check.code, check.message, undefined, check.details);

    // Asked while the start's first statements run; its answer is awaited before anything is judged.
    const linking = this.rpc.call('sessions.status', { userId: req.userId });
    linking.catch(() => undefined);
    const when = checkStartAt(req.startAt);
    const startAt = (when.ok && when.startAt) || null;

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
      // The key, the caps' counts, the policy, the lane's counters and who is suppressed, in one statement.
      const reads = await admission.admit(
        em,
        jobId,
        check.recipients.map((r) => r.phone),
      );
      // Refusals in the order the spec's checks come: the link, the start time, then the key and the caps.
      const link = await linking;
      if (!LINKED_STATES.has(link.state))
        throw AppError.conflict(JobsErrorCode.NotLinked, JOB_MESSAGES.notLinked, { state: link.state });
      if (!when.ok) throw AppError.validation(PolicyErrorCode.InvalidStartAt, when.message, { startAt: when.message });
      admission.judge(reads, total);
      // Locked for this transaction: the retention clean-up cannot delete it under the start.
      const media = attached ? await this.media.use(em, req.userId, attached.id) : undefined;
      const ahead = reads.ahead;
      const policy = reads.policy ?? this.policies.standard();
      const counters = reads.counters;
      // Opted-out and not-on-WhatsApp recipients are skipped: recorded, not queued.
      skips = reads.suppressed;
      const queued = skips.size === 0 ? check.recipients : check.recipients.filter((r) => !skips.has(r.phone));
      const texts =
        check.personalised || varied
          ? queued.map((r) => (varied ? pickVariation(r.text, `${jobId}:${r.phone}`) : r.text))
          : [];
      // The report's variables, on each recipient's row.
      const variables = queued.some((r) => r.variables) ? queued.map((r) => r.variables ?? null) : [];
      estimate = estimateSend(queued.length, policy, { startAt: startAt ?? undefined, counters });
      await this.jobs.insertWithRecipients(
        em,
        {
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
          personalised: check.recipients.some((r) => r.variables),
        },
        queued.map((r) => r.phone),
        texts,
        variables,
      );
      if (media) await this.media.attachToJob(em, jobId, media);
      await this.optOuts.recordSkips(
        em,
        jobId,
        skips,
        new Map(check.recipients.flatMap((r) => (r.variables && skips.has(r.phone) ? [[r.phone, r.variables]] : []))),
      );
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
      {
        jobId,
        userId: req.userId,
        total,
        personalised: check.personalised,
        scheduled: startAt !== null,
        skippedOptedOut: optedOut,
        skippedNotOnWhatsApp: notOnWhatsApp,
      },
      'job accepted',
    );
    void this.worker.kickSoon(req.userId);
    return {
      jobId,
      estimatedTime: estimate.estimatedTime,
      estimatedFinishAt: estimate.estimatedFinishAt.toISOString(),
      status,
      total,
    };
  }
}

/** How many were skipped for each reason, for the start's log line. */
function countReasons(skips: ReadonlyMap<string, SkipReason>): [optedOut: number, notOnWhatsApp: number] {
  let optedOut = 0;
  for (const reason of skips.values()) if (reason === 'opted_out') optedOut++;
  return [optedOut, skips.size - optedOut];
}
