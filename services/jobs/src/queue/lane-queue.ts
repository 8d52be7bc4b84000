import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  backoffMs,
  countSend,
  formatLocal,
  gateAt,
  idempotencyKeyOf,
  JOB_MESSAGES,
  OPT_OUT_MESSAGES,
  PACING_LOG,
  SessionsErrorCode,
  type JobStatus,
  type PausedReason,
  type SendingPolicy,
  type SkipReason,
} from '@bns/contracts';
import { plannedByIndex, SERVICE_ENV, TransactionBatcher, Transactions, type Batch } from '@bns/service-kit';
import { backoffStepsMs, type JobsEnv } from '../config/env.js';
import { JobJournal, JobJournals, type OutboxRow } from '../events/job-journal.js';
import { JobsRepository, type LaneJob } from '../store/jobs.repository.js';
import { Policies } from '../policy/policy.service.js';
import { LaneRepository, type LaneCounters, type LaneDue } from './lane.repository.js';
import { LaneStepRepository, type OpenRecipient, type RecipientTake, type Rescheduled, type SentRecord } from './lane-step.repository.js';
import { WorkersRepository } from './workers.repository.js';
import { paceMs, unlinkedRecheckMs } from './pacing.js';
import { countStepBatch } from '../metrics/jobs.metrics.js';
import { progressOf } from '../store/job-progress.js';
import type { SendOutcome } from './send-outcome.js';

/** Jobs whose last report time is remembered at most. */
const PROGRESS_MEMORY_MAX = 10_000;

/** One message about to go out: everything `finish` needs to record its outcome. */
export interface PlannedSend {
  userId: string;
  jobId: string;
  seq: number;
  phone: string;
  text: string;
  idempotencyKey: string;
  /**
   * When it may leave, on this process's `performance.now()` clock: the lane's slot. The step is taken
   * up to JOBS_SEND_LEAD_MS before it, so the caller waits until then and sends on the slot itself.
   */
  dueAt: number;
  /** When the step that took it held the lane (`performance.now()`): a stop of the job heard after this came after the take. */
  takenAt: number;
  /** Failed tries so far (temporary failures only). */
  attempts: number;
  /** Found `sending`: a worker died while sending it; the key tells sessions to answer, not resend. */
  resumed: boolean;
  /** The job was paused because the account was unlinked. */
  wasUnlinked: boolean;
  /** The pause this send was paced with. */
  paceMs: number;
  /** The policy in force when the send was planned, and the lane's counters then (the lane is held: nobody else moves them). */
  policy: SendingPolicy;
  counters: LaneCounters;
}

export type NextStep = (
  | { kind: 'lost'; published: OutboxRow[] }
  | { kind: 'idle'; published: OutboxRow[] }
  | { kind: 'wait'; waitMs: number; published: OutboxRow[] }
  | { kind: 'send'; send: PlannedSend; published: OutboxRow[] }
) & {
  /** Recipients this step skipped (opted out or not on WhatsApp since the job was created), for the metrics once committed. */
  skipped?: SkipReason[];
};

export type Finished = ({ kind: 'lost'; published: OutboxRow[] } | { kind: 'wait'; waitMs: number; published: OutboxRow[] }) & {
  /** With `thenNext`, when the lane was due again at once: its next step, taken in the same transaction. */
  next?: NextStep;
};

/**
 * The durable queue (Postgres, schema `jobs`). An account's work is a lane: the one row that holds
 * its pacing (`next_send_at`) and the worker sending for it (`holder`). A worker takes a lane only
 * when nobody holds it or its holder stopped beating its heart, and every step re-checks that it
 * still holds it under the lane's row lock, so two workers never send for one account at once.
 */
@Injectable()
export class LaneQueue {
  /**
   * Lane steps of many accounts that come due together share one transaction: one commit
   * for many, and their log lines and events written in one statement each.
   */
  private readonly steps: TransactionBatcher;
  /** How long before its slot a lane's next send is prepared (JOBS_SEND_LEAD_MS, at least the 1 ms the clocks may disagree by). */
  readonly leadMs: number;
  /** When this process last reported a running job's progress after a send (`performance.now()`), by job: see `coalesced`. */
  private readonly progressAt = new Map<string, number>();

  constructor(
    private readonly tx: Transactions,
    private readonly lanes: LaneRepository,
    private readonly laneSteps: LaneStepRepository,
    private readonly workers: WorkersRepository,
    private readonly jobs: JobsRepository,
    private readonly policies: Policies,
    private readonly journals: JobJournals,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.leadMs = Math.max(1, env.JOBS_SEND_LEAD_MS);
    // Greedy: a batch's steps share their statements, so one big batch costs hardly more than a small one
    // (jobs-throughput at delay 0: 740–819 messages/s against 612–650 spread evenly; 2,000 accounts at 4 s
    // paced to a p99 of 43 ms).
    this.steps = new TransactionBatcher(tx, {
      maxBatch: env.JOBS_STEP_BATCH,
      maxInFlight: env.JOBS_STEP_TRANSACTIONS,
      fill: 'greedy',
      onBatch: countStepBatch,
      // Every step transaction: its prepared statements (STEP_PREPARED) are planned by index.
      begin: plannedByIndex,
    });
  }

  async heartbeat(workerId: string): Promise<void> {
    await this.workers.beat(this.tx.manager, workerId);
  }

  /** Graceful stop: lanes are handed back at once rather than after the stale time. */
  async retire(workerId: string): Promise<void> {
    await this.lanes.release(this.tx.manager, workerId);
    await this.workers.forget(this.tx.manager, workerId);
  }

  /**
   * Takes up to `limit` lanes with work due within `lookaheadMs` that no live worker holds, or only
   * `userId`'s lane (whenever due). Returns each with how long until its next send.
   */
  claim(workerId: string, limit: number, lookaheadMs: number, userId?: string): Promise<LaneDue[]> {
    return this.lanes.claim(this.tx.manager, workerId, limit, lookaheadMs, this.env.JOBS_WORKER_STALE_MS, userId);
  }

  /** Lanes the database says this worker holds (a safety net against losing one in memory). */
  held(workerId: string): Promise<LaneDue[]> {
    return this.lanes.held(this.tx.manager, workerId);
  }

  /**
   * The lane's next step, in one transaction under the lane's row lock: the oldest workable job; the
   * account's gates (back-off after pushback, sending window, daily cap with warm-up) as they stand at
   * the lane's slot, which pause the job and put the lane to sleep until they open; then the job's
   * first open recipient the account may still send to (opted-out ones are skipped, see `take`),
   * marked `sending`, and the lane's next slot booked with the policy's gap after this one. A recipient
   * already `sending` was left by a dead worker and goes out again with the same key.
   *
   * The step may be taken up to `leadMs` before the slot (the send says when it is due), so the
   * database work is done while the lane waits, not added to the gap between two messages.
   */
  next(workerId: string, userId: string, opts: { waitMs?: number } = {}): Promise<NextStep> {
    return this.steps.run((em, batch) => this.nextIn(em, batch, workerId, userId), { waitMs: opts.waitMs });
  }

  private async nextIn(em: EntityManager, batch: Batch, workerId: string, userId: string): Promise<NextStep> {
    const lane = await batch.gather('lanes.lock', userId, (m, userIds: string[]) => this.laneSteps.lockMany(m, userIds, this.leadMs));
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

    const closed = this.closedGate(policy, lane, now);
    if (closed) {
      if (job.status !== 'paused' || job.pausedReason !== closed.reason || job.resumesAt?.getTime() !== closed.resumesAt.getTime()) {
        await this.jobs.pause(em, job.id, closed.reason, closed.resumesAt);
        if (job.status !== 'paused' || job.pausedReason !== closed.reason) await journal.log(job.id, 'warning', closed.log);
        journal.progress(job.id, 'paused', progressOf(job));
      }
      await this.lanes.sleep(em, userId, closed.resumesAt);
      return { kind: 'idle', published: await journal.commit() };
    }

    if (job.status !== 'running') {
      // Its first message (it may have waited for its window first), or going on after a pause.
      const first = job.startedAt === null;
      await batch.gather('jobs.markRunning', job.id, (m, jobIds: string[]) => this.laneSteps.markRunningMany(m, jobIds));
      await journal.log(job.id, 'info', first ? JOB_MESSAGES.jobStarted(job.total) : PACING_LOG.resumed);
      job.status = 'running';
      journal.progress(job.id, 'running', progressOf(job));
    }
    // The lane's next slot is booked a gap after this one by the take itself, when it takes someone.
    const pace = paceMs(policy.delayMs, policy.jitterMs);
    const { recipient, skipped } = await this.take(em, batch, journal, userId, job, pace);
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
        attempts: recipient.attempts,
        resumed: recipient.state === 'sending',
        wasUnlinked: job.unlinkedSince !== null,
        paceMs: pace,
        policy,
        counters: { dayKey: lane.dayKey, dayCount: lane.dayCount, warmUpFrom: lane.warmUpFrom, runCount: lane.runCount, engineFailures: lane.engineFailures, backoffLevel: lane.backoffLevel, backoffAt: lane.backoffAt },
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
  ): Promise<{ recipient: OpenRecipient | undefined; skipped: SkipReason[] }> {
    const days = this.env.NOT_ON_WHATSAPP_MEMORY_DAYS;
    const take = { jobId: job.id, message: job.message, userId, paceMs };
    const recipient = await batch.gather('recipients.take', take, (m, takes: RecipientTake[]) => this.laneSteps.takeFirstOpenMany(m, takes, days));
    const skipped = !recipient || recipient.passedOver ? await this.skipSuppressed(em, journal, userId, job) : [];
    return { recipient, skipped };
  }

  /** Moves the job's newly suppressed pending recipients to its skips; `job`'s count is updated in place. */
  private async skipSuppressed(em: EntityManager, journal: JobJournal, userId: string, job: LaneJob): Promise<SkipReason[]> {
    const moved = await this.laneSteps.skipSuppressedRecipients(em, userId, job.id, this.env.NOT_ON_WHATSAPP_MEMORY_DAYS);
    if (moved.length === 0) return [];
    for (const s of moved) await journal.log(job.id, 'warning', OPT_OUT_MESSAGES.skippedMidJob(s.phone, s.reason));
    job.skipped = (await this.jobs.countSkipped(em, job.id, moved.length)).skipped;
    return moved.map((s) => s.reason);
  }

  /** The first gate that keeps the account from sending at `now`, with when it opens and the log line saying so. */
  private closedGate(policy: SendingPolicy, lane: LaneCounters, now: Date): { reason: PausedReason; resumesAt: Date; log: string } | undefined {
    const backoffUntil = this.backoffUntil(lane);
    if (backoffUntil && backoffUntil > now) {
      return { reason: 'rate_limited', resumesAt: backoffUntil, log: PACING_LOG.rateLimited(Math.ceil((backoffUntil.getTime() - now.getTime()) / 60_000), formatLocal(backoffUntil, policy.timeZone)) };
    }
    const gate = gateAt(policy, now, lane);
    if (gate.open) return undefined;
    const at = formatLocal(gate.resumesAt, policy.timeZone);
    return {
      reason: gate.reason,
      resumesAt: gate.resumesAt,
      log: gate.reason === 'daily_cap' ? PACING_LOG.dailyCapReached(gate.cap ?? 0, at) : PACING_LOG.windowClosed(at),
    };
  }

  private backoffUntil(lane: Pick<LaneCounters, 'backoffLevel' | 'backoffAt'>): Date | undefined {
    if (lane.backoffLevel < 1 || !lane.backoffAt) return undefined;
    const steps = backoffStepsMs(this.env);
    return new Date(lane.backoffAt.getTime() + steps[Math.min(lane.backoffLevel, steps.length) - 1]!);
  }

  /**
   * Records what became of a planned send and books the lane's next step. With `thenNext`, a lane
   * that is due again within `leadMs` (no pause, or a short one) takes that step in the same
   * transaction ("finish N" and "next N+1" as one), unless the caller is stopping. `waitMs`: how long
   * it may wait for other steps to share its transaction.
   */
  finish(workerId: string, send: PlannedSend, outcome: SendOutcome, opts: { thenNext?: boolean; waitMs?: number } = {}): Promise<Finished> {
    return this.steps.run(
      async (em, batch) => {
        const done = await this.finishIn(em, batch, workerId, send, outcome, opts.thenNext === true);
        if (!opts.thenNext || done.kind !== 'wait' || done.waitMs > this.leadMs) return done;
        return { ...done, next: await this.nextIn(em, batch, workerId, send.userId) };
      },
      { waitMs: opts.waitMs },
    );
  }

  private async finishIn(em: EntityManager, batch: Batch, workerId: string, send: PlannedSend, outcome: SendOutcome, thenNext: boolean): Promise<Finished> {
    const journal = this.journals.open(em, send.userId, batch);
    /** Lane's next slot: at least what `next` booked; later for retries and pauses. */
    let notBeforeMs = 0;
    let counters: Partial<LaneCounters> | undefined;
    /** The lane as rescheduled, when the outcome's own statement did it (a send). */
    let lane: Rescheduled | undefined;
    let rescheduled = false;
    /** The job as the outcome's count left it (the usual path): no need to read it again. */
    let counted: LaneJob | undefined;
    switch (outcome.kind) {
      case 'sent': {
        // The policy's long pause follows every pauseEvery-th message; the day's count feeds the cap.
        let runCount = send.counters.runCount + 1;
        let planned = send.paceMs;
        if (send.policy.pauseEvery && send.policy.pauseMs && runCount >= send.policy.pauseEvery) {
          planned += send.policy.pauseMs;
          runCount = 0;
        }
        // Sent before a crash: nothing went out now, so the next message only keeps the gap to that one.
        // Otherwise the gap that matters is between messages as they really left; a slow send pushes the next one.
        const next = new Date(outcome.at.getTime() + planned);
        const slot = outcome.duplicate ? { notBeforeMs: 0, exactly: next } : { notBeforeMs: 0, floor: next };
        const sentCounters = { ...countSend(send.policy, outcome.at, send.counters), runCount, engineFailures: 0 };
        // Recorded and rescheduled in one statement; the slot and counters apply only if the outcome did
        // (not when another worker recorded it after taking over).
        const record = { send, at: outcome.at, pacedMs: planned, slot, counters: sentCounters };
        const recorded = await batch.gather(`lanes.recordSent:${workerId}`, record, (m, records: SentRecord[]) => this.laneSteps.recordSentMany(m, workerId, records));
        lane = recorded.lane;
        rescheduled = true;
        const job = recorded.job;
        if (!job) break;
        counted = job;
        if (send.wasUnlinked) await journal.log(send.jobId, 'info', JOB_MESSAGES.resumed);
        await journal.log(send.jobId, 'success', JOB_MESSAGES.messageSent(send.phone));
        this.messageStatus(journal, send, 'sent', outcome.at, undefined, outcome.messageId);
        if (job.status === 'completed') await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
        break;
      }
      case 'permanent':
        await this.fail(em, journal, send, outcome.error);
        // WhatsApp does not know the number: remembered, so later jobs skip it.
        if (outcome.code === SessionsErrorCode.NotOnWhatsApp) await this.laneSteps.rememberNotOnWhatsApp(em, send.userId, send.phone);
        break;
      case 'rate_limited':
        notBeforeMs = await this.backOff(em, journal, send);
        break;
      case 'transient': {
        // Several engine failures in a row, to numbers with no verdict, are WhatsApp pushing back.
        const engineFailures = outcome.engine ? send.counters.engineFailures + 1 : 0;
        if (engineFailures >= this.env.JOB_BACKOFF_AFTER_FAILURES) {
          notBeforeMs = await this.backOff(em, journal, send);
          break;
        }
        counters = { engineFailures };
        const retry = send.attempts + 1;
        if (retry > this.env.JOB_MAX_RETRIES) {
          await this.fail(em, journal, send, outcome.error);
          break;
        }
        // base, 2×base, 4×base, …
        notBeforeMs = backoffMs(retry, { baseMs: this.env.JOB_RETRY_BASE_MS });
        if (await this.laneSteps.retryLater(em, send.jobId, send.seq, outcome.error, notBeforeMs)) {
          await journal.log(
            send.jobId,
            'warning',
            JOB_MESSAGES.retrying(send.phone, retry, this.env.JOB_MAX_RETRIES, Math.round(notBeforeMs / 1000)),
          );
        }
        break;
      }
      case 'busy':
        notBeforeMs = this.env.JOB_RETRY_BASE_MS;
        await this.laneSteps.release(em, send.jobId, send.seq);
        break;
      case 'unlinked':
        notBeforeMs = await this.pauseUnlinked(em, journal, send);
        break;
      case 'withheld':
        // Nothing went out and nothing changed for the job: the stop that withheld it said so already.
        await this.laneSteps.release(em, send.jobId, send.seq);
        break;
    }
    if (!rescheduled) lane = await this.laneSteps.reschedule(em, send.userId, workerId, { notBeforeMs }, counters);
    if (outcome.kind !== 'withheld') {
      const job = counted ?? (await this.jobs.get(em, send.jobId))!;
      const nextAtOnce = thenNext && lane !== undefined && lane.waitMs <= this.leadMs;
      if (!this.coalesced(send.jobId, job.status, outcome.kind === 'sent' && nextAtOnce)) {
        journal.progress(send.jobId, job.status, progressOf(job), job.status === 'running' ? (lane?.nextSendAt ?? null) : null);
      }
    }
    const published = await journal.commit();
    return lane ? { kind: 'wait', waitMs: lane.waitMs, published } : { kind: 'lost', published };
  }

  /**
   * Whether a running job's progress report after a send is left to the next one: only when the lane's
   * next send follows at once (no pause: it is taken in this same transaction, and its own record reports
   * again) and this job was reported less than JOBS_PROGRESS_EVERY_MS ago. A report carries the job's whole
   * counts, so the next one says everything this one would have; a job sending without pause is reported
   * a few times a second instead of once per message. A stop, a pause, a failure or the end
   * of the job is always reported, and so is the send before any pause.
   */
  private coalesced(jobId: string, status: JobStatus, nextAtOnce: boolean): boolean {
    const now = performance.now();
    if (status !== 'running') {
      this.progressAt.delete(jobId);
      return false;
    }
    if (nextAtOnce && now - (this.progressAt.get(jobId) ?? -Infinity) < this.env.JOBS_PROGRESS_EVERY_MS) return true;
    // Bounded: forgetting a job only costs one report more.
    if (this.progressAt.size >= PROGRESS_MEMORY_MAX) this.progressAt.clear();
    this.progressAt.set(jobId, now);
    return false;
  }

  private async fail(em: EntityManager, journal: JobJournal, send: PlannedSend, error: string): Promise<void> {
    const job = await this.laneSteps.recordFailed(em, send.jobId, send.seq, error);
    if (!job) return;
    await journal.log(send.jobId, 'error', JOB_MESSAGES.messageFailed(send.phone, error));
    this.messageStatus(journal, send, 'failed', new Date(), error);
    if (job.status === 'completed') await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
  }

  private async complete(em: EntityManager, journal: JobJournal, job: LaneJob): Promise<void> {
    await this.jobs.complete(em, job.id);
    await journal.log(job.id, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
    journal.progress(job.id, 'completed', progressOf(job));
  }

  /**
   * WhatsApp pushed back: the recipient waits (no attempt used), the account backs off for the next
   * step of JOB_BACKOFF_MS (the level grows with each hit within a day) and the job shows why and until when.
   */
  private async backOff(em: EntityManager, journal: JobJournal, send: PlannedSend): Promise<number> {
    await this.laneSteps.release(em, send.jobId, send.seq);
    const now = new Date();
    const { backoffAt, backoffLevel } = send.counters;
    const level = backoffAt && now.getTime() - backoffAt.getTime() < 86_400_000 ? backoffLevel + 1 : 1;
    const until = this.backoffUntil({ backoffLevel: level, backoffAt: now })!;
    await this.lanes.setCounters(em, send.userId, { backoffLevel: level, backoffAt: now, engineFailures: 0 });
    const job = await this.jobs.get(em, send.jobId);
    if (job?.status === 'running') {
      await this.jobs.pause(em, send.jobId, 'rate_limited', until);
      const minutes = Math.ceil((until.getTime() - now.getTime()) / 60_000);
      await journal.log(send.jobId, 'warning', PACING_LOG.rateLimited(minutes, formatLocal(until, send.policy.timeZone)));
    }
    return until.getTime() - now.getTime();
  }

  /** Not linked: the recipient waits, the job pauses, and fails once the account stayed unlinked too long. */
  private async pauseUnlinked(em: EntityManager, journal: JobJournal, send: PlannedSend): Promise<number> {
    await this.laneSteps.release(em, send.jobId, send.seq);
    const job = await this.jobs.markUnlinked(em, send.jobId);
    if (!job || job.status !== 'running') return 0;
    const timeout = this.env.JOB_UNLINKED_TIMEOUT_MS;
    if (job.unlinkedMs >= timeout) {
      const reason = JOB_MESSAGES.unlinkedTooLong(timeout);
      await this.jobs.fail(em, send.jobId, reason);
      await journal.log(send.jobId, 'error', reason);
      return 0;
    }
    if (job.first) await journal.log(send.jobId, 'warning', JOB_MESSAGES.waitingForLink);
    const wait = unlinkedRecheckMs(job.unlinkedMs, timeout, this.env.JOB_UNLINKED_RECHECK_MAX_MS);
    await this.jobs.markWaitingForLink(em, send.jobId, new Date(Date.now() + wait));
    return wait;
  }

  /** Deterministic event id: a republish after a crash is the same event, deduplicated downstream. */
  private messageStatus(journal: JobJournal, send: PlannedSend, status: 'sent' | 'failed', at: Date, error?: string, messageId?: string): void {
    journal.emit('events.message.status', {
      eventId: `${send.idempotencyKey}:${status}`,
      userId: send.userId,
      at: at.toISOString(),
      jobId: send.jobId,
      idempotencyKey: send.idempotencyKey,
      recipient: send.phone,
      status,
      content: send.text,
      ...(messageId ? { messageId } : {}),
      ...(error ? { error } : {}),
    });
  }
}
