import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  countSend,
  idempotencyKeyOf,
  JOB_MESSAGES,
  OPT_OUT_MESSAGES,
  PACING_LOG,
  type SkipReason,
} from '@bns/contracts';
import { SERVICE_ENV, type Batch } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { JobJournal, JobJournals } from '../events/job-journal.js';
import { Policies } from '../policy/policy.service.js';
import { progressOf } from '../store/job-progress.js';
import { JobsRepository, type LaneJob } from '../store/jobs.repository.js';
import { LaneGate } from './lane-gate.js';
import {
  LaneStepRepository,
  type OpenRecipient,
  type RecipientTake,
  type TakenCounters,
} from './lane-step.repository.js';
import { leadMsOf, type NextStep } from './lane-step.js';
import { LaneRepository } from './lane.repository.js';
import { paceMs, runAfterSend } from './pacing.js';

/**
 * A lane's next step (`LaneQueue.next`), in the caller's step transaction under the lane's row lock:
 * which job, whether the gates let the account send now, and whom it sends to.
 */
@Injectable()
export class LaneTake {
  private readonly leadMs: number;

  constructor(
    private readonly lanes: LaneRepository,
    private readonly laneSteps: LaneStepRepository,
    private readonly jobs: JobsRepository,
    private readonly policies: Policies,
    private readonly journals: JobJournals,
    private readonly gate: LaneGate,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.leadMs = leadMsOf(env);
  }

  async step(em: EntityManager, batch: Batch, workerId: string, userId: string): Promise<NextStep> {
    const lane = await batch.gather('lanes.lock', userId, (m, userIds: string[]) =>
      this.laneSteps.lockMany(m, userIds, this.leadMs),
    );
    // The slot as this process's clock sees it: measured once the answer is here, so never early.
    const lockedAt = performance.now();
    if (!lane || lane.holder !== workerId) return { kind: 'lost', published: [] };
    if (lane.waitMs > this.leadMs) return { kind: 'wait', waitMs: lane.waitMs, published: [] };
    const dueInMs = Math.max(0, lane.waitMs);

    const job = lane.job;
    if (!job) {
      // Checked again with a fresh snapshot: a start that held this lock committed a job the lock
      // statement could not see (see `afterNoJob`); then step again at once. A scheduled job: sleep
      // until it is due. Otherwise rest; a start from now on waits for this lock and reactivates the lane.
      const after = await this.laneSteps.afterNoJob(em, userId, this.leadMs);
      if (after.workable) return { kind: 'wait', waitMs: 0, published: [] };
      if (after.nextStart) await this.lanes.sleep(em, userId, after.nextStart);
      else await this.lanes.deactivate(em, userId);
      return { kind: 'idle', published: [] };
    }
    const policy = lane.policy ?? this.policies.standard();
    const journal = this.journals.open(em, userId, batch);
    const now = new Date(Date.now() + dueInMs);

    const closed = this.gate.closedGate(policy, lane, now);
    if (closed) {
      if (
        job.status !== 'paused' ||
        job.pausedReason !== closed.reason ||
        job.resumesAt?.getTime() !== closed.resumesAt.getTime()
      ) {
        await this.jobs.pause(em, job.id, closed.reason, closed.resumesAt);
        if (job.status !== 'paused' || job.pausedReason !== closed.reason)
          await journal.log(job.id, 'warning', closed.log);
        journal.progress(job.id, 'paused', progressOf(job));
      }
      await this.lanes.sleep(em, userId, closed.resumesAt);
      return { kind: 'idle', published: await journal.commit() };
    }

    if (job.status !== 'running') {
      // Its first message (it may have waited for its window first), or going on after a pause.
      const first = job.startedAt === null;
      await batch.gather('jobs.markRunning', job.id, (m, jobIds: string[]) =>
        this.laneSteps.markRunningMany(m, jobIds),
      );
      await journal.log(job.id, 'info', first ? JOB_MESSAGES.jobStarted(job.total) : PACING_LOG.resumed);
      job.status = 'running';
      journal.progress(job.id, 'running', progressOf(job));
    }
    // The lane's next slot is booked a gap after this one by the take itself, when it takes someone,
    // and the message is counted with it (the day's count, the run since the long pause).
    const pace = paceMs(policy.delayMs, policy.jitterMs);
    const counted: TakenCounters = {
      ...countSend(policy, now, lane),
      runCount: runAfterSend(policy, lane.runCount).runCount,
    };
    const { recipient, skipped } = await this.take(em, batch, journal, userId, job, pace, counted);
    if (!recipient) {
      await this.complete(em, journal, job);
      return { kind: 'wait', waitMs: 0, published: await journal.commit(), skipped };
    }
    if (skipped.length > 0) journal.progress(job.id, job.status, progressOf(job));
    return {
      kind: 'send',
      send: {
        dueAt: lockedAt + dueInMs,
        takenAt: lockedAt,
        userId,
        jobId: job.id,
        seq: recipient.seq,
        phone: recipient.phone,
        text: recipient.text,
        idempotencyKey: idempotencyKeyOf(job.id, recipient.phone),
        media: job.media,
        attempts: recipient.attempts,
        resumed: recipient.state === 'sending',
        wasUnlinked: job.unlinkedSince !== null,
        paceMs: pace,
        policy,
        counters: {
          dayKey: lane.dayKey,
          dayCount: lane.dayCount,
          warmUpFrom: lane.warmUpFrom,
          runCount: lane.runCount,
          engineFailures: lane.engineFailures,
          backoffLevel: lane.backoffLevel,
          backoffAt: lane.backoffAt,
          unanswered: lane.unanswered,
        },
        counted: recipient.state === 'sending' ? undefined : { counters: counted, unanswered: recipient.unanswered },
      },
      published: await journal.commit(),
      skipped,
    };
  }

  /**
   * The recipient this step sends to, marked `sending` — in the step's transaction, so the opt-out
   * list is checked at the moment of sending: the take passes over pending recipients who
   * opted out (or were found not on WhatsApp) since the job was created. When it passed over some, or
   * found nobody left, those leave the queue for the job's skips, each with a log line and counted in
   * `job.skipped` (only then: it costs a statement, so not on every step). So the job completes with
   * every recipient counted (sent + failed + skipped = total).
   */
  private async take(
    em: EntityManager,
    batch: Batch,
    journal: JobJournal,
    userId: string,
    job: LaneJob,
    paceMs: number,
    counted: TakenCounters,
  ): Promise<{ recipient: OpenRecipient | undefined; skipped: SkipReason[] }> {
    const days = this.env.NOT_ON_WHATSAPP_MEMORY_DAYS;
    const take = { jobId: job.id, message: job.message, userId, paceMs, counted };
    const recipient = await batch.gather('recipients.take', take, (m, takes: RecipientTake[]) =>
      this.laneSteps.takeFirstOpenMany(m, takes, days),
    );
    const skipped = !recipient || recipient.passedOver ? await this.skipSuppressed(em, journal, userId, job) : [];
    return { recipient, skipped };
  }

  /** Moves the job's newly suppressed pending recipients to its skips; `job`'s count is updated in place. */
  private async skipSuppressed(
    em: EntityManager,
    journal: JobJournal,
    userId: string,
    job: LaneJob,
  ): Promise<SkipReason[]> {
    const moved = await this.laneSteps.skipSuppressedRecipients(
      em,
      userId,
      job.id,
      this.env.NOT_ON_WHATSAPP_MEMORY_DAYS,
    );
    if (moved.length === 0) return [];
    for (const s of moved) await journal.log(job.id, 'warning', OPT_OUT_MESSAGES.skippedMidJob(s.phone, s.reason));
    job.skipped = (await this.jobs.countSkipped(em, job.id, moved.length)).skipped;
    return moved.map((s) => s.reason);
  }

  private async complete(em: EntityManager, journal: JobJournal, job: LaneJob): Promise<void> {
    await this.jobs.complete(em, job.id);
    await journal.log(job.id, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
    journal.progress(job.id, 'completed', progressOf(job));
  }
}
