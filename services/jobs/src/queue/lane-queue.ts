import { Inject, Injectable } from '@nestjs/common';
import { plannedByIndex, SERVICE_ENV, TransactionBatcher, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { countStepBatch } from '../metrics/jobs.metrics.js';
import { LaneFinish } from './lane-finish.js';
import { LaneGate } from './lane-gate.js';
import { leadMsOf, type Finished, type NextStep, type PlannedSend } from './lane-step.js';
import { LaneTake } from './lane-take.js';
import { LaneRepository, type LaneDue } from './lane.repository.js';
import type { SendOutcome } from './send-outcome.js';
import { WorkersRepository } from './workers.repository.js';

export type { Finished, NextStep, PlannedSend } from './lane-step.js';

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

  constructor(
    private readonly tx: Transactions,
    private readonly lanes: LaneRepository,
    private readonly workers: WorkersRepository,
    private readonly take: LaneTake,
    private readonly finisher: LaneFinish,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.leadMs = leadMsOf(env);
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
   * first open recipient the account may still send to (opted-out ones are skipped, see `LaneTake`),
   * marked `sending`, and the lane's next slot booked with the policy's gap after this one. A recipient
   * already `sending` was left by a dead worker and goes out again with the same key.
   *
   * The step may be taken up to `leadMs` before the slot (the send says when it is due), so the
   * database work is done while the lane waits, not added to the gap between two messages.
   */
  next(workerId: string, userId: string, opts: { waitMs?: number } = {}): Promise<NextStep> {
    return this.steps.run((em, batch) => this.take.step(em, batch, workerId, userId), { waitMs: opts.waitMs });
  }

  /**
   * Records what became of a planned send and books the lane's next step. With `thenNext`, a lane
   * that is due again within `leadMs` (no pause, or a short one) takes that step in the same
   * transaction ("finish N" and "next N+1" as one), unless the caller is stopping. `waitMs`: how long
   * it may wait for other steps to share its transaction.
   */
  finish(
    workerId: string,
    send: PlannedSend,
    outcome: SendOutcome,
    opts: { thenNext?: boolean; waitMs?: number } = {},
  ): Promise<Finished> {
    return this.steps.run(
      async (em, batch) => {
        const done = await this.finisher.record(em, batch, workerId, send, outcome, opts.thenNext === true);
        if (!opts.thenNext || done.kind !== 'wait' || done.waitMs > this.leadMs) return done;
        return { ...done, next: await this.take.step(em, batch, workerId, send.userId) };
      },
      { waitMs: opts.waitMs },
    );
  }
}

/** The lane queue and the parts of its step, for a module's providers. */
export const LANE_QUEUE_PROVIDERS = [LaneGate, LaneTake, LaneFinish, LaneQueue];
