import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { backoffMs, formatLocal, JOB_MESSAGES, PACING_LOG, SessionsErrorCode, type JobStatus } from '@bns/contracts';
import { SERVICE_ENV, type Batch } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { JobJournal, JobJournals } from '../events/job-journal.js';
import { progressOf } from '../store/job-progress.js';
import { JobsRepository, type LaneJob } from '../store/jobs.repository.js';
import { LaneGate } from './lane-gate.js';
import { LaneStepRepository, type Rescheduled, type SentRecord } from './lane-step.repository.js';
import { leadMsOf, type Finished, type PlannedSend } from './lane-step.js';
import { LaneRepository, type LaneCounters } from './lane.repository.js';
import { runAfterSend, unlinkedRecheckMs } from './pacing.js';
import type { SendOutcome } from './send-outcome.js';

/** Jobs whose last report time is remembered at most. */
const PROGRESS_MEMORY_MAX = 10_000;

/**
 * What became of a planned send (`LaneQueue.finish`), in the caller's step transaction: the recipient's
 * outcome, the job's counts and state, the account's back-off, and the lane's next slot.
 */
@Injectable()
export class LaneFinish {
  private readonly leadMs: number;
  /** When this process last reported a running job's progress after a send (`performance.now()`), by job: see `coalesced`. */
  private readonly progressAt = new Map<string, number>();

  constructor(
    private readonly lanes: LaneRepository,
    private readonly laneSteps: LaneStepRepository,
    private readonly jobs: JobsRepository,
    private readonly journals: JobJournals,
    private readonly gate: LaneGate,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.leadMs = leadMsOf(env);
  }

  async record(
    em: EntityManager,
    batch: Batch,
    workerId: string,
    send: PlannedSend,
    outcome: SendOutcome,
    thenNext: boolean,
  ): Promise<Finished> {
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
        // The policy's long pause follows every pauseEvery-th message (the take counted the run and
        // the day's count, which feeds the cap).
        const planned = send.paceMs + runAfterSend(send.policy, send.counters.runCount).pauseMs;
        // Sent before a crash: nothing went out now, so the next message only keeps the gap to that one.
        // Otherwise the gap that matters is between messages as they really left; a slow send pushes the next one.
        const next = new Date(outcome.at.getTime() + planned);
        const slot = outcome.duplicate ? { notBeforeMs: 0, exactly: next } : { notBeforeMs: 0, floor: next };
        // Recorded and rescheduled in one statement; the slot and counters apply only if the outcome did
        // (not when another worker recorded it after taking over). A plain send leaves the lane as its
        // take wrote it: the recipient's sent time and planned gap are its slot.
        const keepLane = !outcome.duplicate && send.counters.engineFailures === 0;
        const record = { send, at: outcome.at, pacedMs: planned, slot, counters: { engineFailures: 0 }, keepLane };
        const recorded = await batch.gather(`lanes.recordSent:${workerId}`, record, (m, records: SentRecord[]) =>
          this.laneSteps.recordSentMany(m, workerId, records),
        );
        lane = recorded.lane;
        rescheduled = true;
        const job = recorded.job;
        if (!job) break;
        counted = job;
        // Connected again as of this send: the line goes with it, before its "Message sent" line.
        if (send.wasUnlinked) await journal.log(send.jobId, 'info', JOB_MESSAGES.resumed, outcome.at);
        journal.sent(send.jobId, send.seq, send.phone, outcome.at);
        this.messageStatus(journal, send, 'sent', outcome.at, undefined, outcome.messageId);
        if (job.status === 'completed')
          await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
        break;
      }
      case 'permanent':
        await this.fail(em, journal, send, outcome.error);
        // WhatsApp does not know the number: remembered, so later jobs skip it.
        if (outcome.code === SessionsErrorCode.NotOnWhatsApp)
          await this.laneSteps.rememberNotOnWhatsApp(em, send.userId, send.phone);
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
    if (!rescheduled) {
      // Nothing went out: what its take counted is put back.
      const { dayKey, dayCount, warmUpFrom, runCount } = send.counters;
      const restored = send.counted ? { dayKey, dayCount, warmUpFrom, runCount, ...counters } : counters;
      const uncountDay = send.counted?.unanswered ? (send.counted.counters.dayKey ?? undefined) : undefined;
      lane = await this.laneSteps.reschedule(em, send.userId, workerId, { notBeforeMs }, restored, uncountDay);
    }
    if (outcome.kind !== 'withheld') {
      const job = counted ?? (await this.jobs.get(em, send.jobId))!;
      const nextAtOnce = thenNext && lane !== undefined && lane.waitMs <= this.leadMs;
      if (!this.coalesced(send.jobId, job.status, outcome.kind === 'sent' && nextAtOnce)) {
        journal.progress(
          send.jobId,
          job.status,
          progressOf(job),
          job.status === 'running' ? (lane?.nextSendAt ?? null) : null,
        );
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
    if (job.status === 'completed')
      await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
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
    const until = this.gate.backoffUntil({ backoffLevel: level, backoffAt: now })!;
    await this.lanes.setCounters(em, send.userId, { backoffLevel: level, backoffAt: now, engineFailures: 0 });
    const job = await this.jobs.get(em, send.jobId);
    if (job?.status === 'running') {
      await this.jobs.pause(em, send.jobId, 'rate_limited', until);
      const minutes = Math.ceil((until.getTime() - now.getTime()) / 60_000);
      await journal.log(
        send.jobId,
        'warning',
        PACING_LOG.rateLimited(minutes, formatLocal(until, send.policy.timeZone)),
      );
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
  private messageStatus(
    journal: JobJournal,
    send: PlannedSend,
    status: 'sent' | 'failed',
    at: Date,
    error?: string,
    messageId?: string,
  ): void {
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
