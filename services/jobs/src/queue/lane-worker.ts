import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  OPTED_OUT_SUBJECT,
  OptedOutNoticeSchema,
  SEND_RECORD_WAIT_MAX_MS,
  type EventKey,
  type JobStatus,
} from '@bns/contracts';
import {
  isRpcDisconnected,
  NATS_CONNECTION,
  noticeOf,
  OutboxPublisher,
  RpcClient,
  SERVICE_ENV,
} from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { countSkipped, lanePlanned, laneSending } from '../metrics/jobs.metrics.js';
import { LaneQueue, type PlannedSend } from './lane-queue.js';
import { gatherWaitMs } from './pacing.js';
import { outcomeOfError, outcomeOfReply, type SendOutcome } from './send-outcome.js';

interface Lane {
  timer?: NodeJS.Timeout;
  /** When its next send is due, as last scheduled (`performance.now()`). */
  dueAt: number;
  running: boolean;
  /** Bumped when the lane is taken (again); a step that ends its lane only does so in its own epoch. */
  epoch: number;
}

/** Resolves at `dueAt` (a `performance.now()` time), never before (a timer may fire a little early on the loop's cached clock). */
async function untilDue(dueAt: number): Promise<void> {
  for (let ms = dueAt - performance.now(); ms > 0; ms = dueAt - performance.now()) {
    await delay(Math.ceil(ms));
  }
}

const optOutKey = (userId: string, phone: string) => `${userId}\u0000${phone}`;

/** Polls between two looks for lanes this worker holds in the database but not in memory. */
const ORPHAN_CHECK_EVERY = 40;
/** NATS reconnects one send may wait out before its failure counts (a flapping connection still ends). */
const MAX_RECONNECT_WAITS = 3;
/** A step that failed on the database is tried again after this. */
const STEP_RETRY_MS = 1000;
/** Progress events say when a job stops; a send prepared ahead of its slot is withheld for these. */
const PROGRESS: EventKey = 'events.job.progress';
const STOPPED: ReadonlySet<JobStatus> = new Set<JobStatus>(['cancelled', 'paused', 'failed']);
/** A stop or an opt-out is remembered this long: far more than any lead (at most 2 s). */
const STOP_MEMORY_MS = 30_000;

/**
 * Sends for the accounts (lanes) this replica holds: one message at a time per account, each at the
 * time its lane booked in the database, so pacing survives restarts and moves with the lane to
 * whichever replica holds it next. Every replica runs one; they share the work through the database.
 */
@Injectable()
export class LaneWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly logger = new Logger('LaneWorker');
  private readonly lanes = new Map<string, Lane>();
  private readonly steps = new Set<Promise<void>>();
  private stopping = false;
  private pollTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  private polls = 0;
  /** Jobs lately stopped (cancelled, paused, failed), by id: when this process heard it (`performance.now()`) and the event's time. */
  private readonly stops = new Map<string, { heard: number; at: number }>();
  private progress?: Subscription;
  /** Numbers lately opted out, by user and number: when this process heard it (`performance.now()`). */
  private readonly optedOut = new Map<string, number>();
  private optOuts?: Subscription;

  constructor(
    private readonly queue: LaneQueue,
    private readonly rpc: RpcClient,
    private readonly outbox: OutboxPublisher,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Whichever replica stopped a job, every replica hears it: a send prepared for it is withheld.
    this.progress = this.nc.subscribe(PROGRESS, {
      callback: (err, msg) => {
        if (!err) this.heard(msg);
      },
    });
    // An opt-out recorded by any replica withholds a send to that number prepared here.
    this.optOuts = this.nc.subscribe(OPTED_OUT_SUBJECT, {
      callback: (err, msg) => {
        if (!err) this.heardOptOut(msg);
      },
    });
    await this.queue.heartbeat(this.id);
    this.heartbeatTimer = setInterval(() => void this.beat(), this.env.JOBS_HEARTBEAT_MS);
    this.schedulePoll(0);
    this.logger.log({ worker: this.id }, 'worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    this.progress?.unsubscribe();
    this.optOuts?.unsubscribe();
    for (const lane of this.lanes.values()) clearTimeout(lane.timer);
    // A send in flight finishes and is recorded, so the next holder does not have to ask again.
    await Promise.race([
      Promise.allSettled([...this.steps]),
      new Promise((r) => setTimeout(r, this.env.RPC_TIMEOUT_MS + 2000)),
    ]);
    await this.queue
      .retire(this.id)
      .catch((err: unknown) => this.logger.warn({ err }, 'could not hand lanes back; they move after the stale time'));
    await this.outbox.drain();
  }

  /** A job was just started for `userId`: take its lane now rather than at the next poll. */
  async kick(userId: string): Promise<void> {
    if (this.stopping) return;
    for (const claimed of await this.queue.claim(this.id, 1, 0, userId)) this.adopt(claimed.userId, claimed.dueInMs);
  }

  /** `kick` after a change that committed: a failure only costs the wait for the next poll, which takes the lane. */
  async kickSoon(userId: string): Promise<void> {
    await this.kick(userId).catch((err: unknown) =>
      this.logger.warn({ err }, 'kick failed; the next poll takes the lane'),
    );
  }

  /**
   * A job's progress event: a stop is remembered for a while; a later one with any other status (a
   * resume) forgets it, but not an earlier one arriving late (a send recorded just before the stop).
   */
  private heard(msg: Msg): void {
    let event: { jobId?: unknown; status?: unknown; at?: unknown };
    try {
      event = msg.json();
    } catch {
      return;
    }
    if (typeof event?.jobId !== 'string') return;
    const at = typeof event.at === 'string' ? Date.parse(event.at) : NaN;
    if (STOPPED.has(event.status as JobStatus)) {
      this.stops.set(event.jobId, { heard: performance.now(), at: Number.isNaN(at) ? Date.now() : at });
    } else if (!(at < (this.stops.get(event.jobId)?.at ?? -Infinity))) {
      this.stops.delete(event.jobId);
    }
  }

  private heardOptOut(msg: Msg): void {
    const notice = noticeOf(msg, OptedOutNoticeSchema);
    if (!notice) return;
    const heard = performance.now();
    for (const phone of notice.phones) this.optedOut.set(optOutKey(notice.userId, phone), heard);
  }

  /**
   * The recipient opted out after this send was taken: it is withheld and goes back to waiting, and the
   * next take passes over it (the opt-out is committed before the notice) and counts it skipped.
   */
  private optedOutSince(send: PlannedSend): boolean {
    const heard = this.optedOut.get(optOutKey(send.userId, send.phone));
    return heard !== undefined && heard > send.takenAt;
  }

  /**
   * The user stopped the job after this send was taken: a stop before the take would have kept the
   * take from choosing the job (both lock its row), so an older stop, or one already undone, never
   * withholds a send. A stop heard only after the send left is the usual send in flight.
   */
  private stoppedSince(send: PlannedSend): boolean {
    const stop = this.stops.get(send.jobId);
    return stop !== undefined && stop.heard > send.takenAt;
  }

  private async beat(): Promise<void> {
    const forget = performance.now() - STOP_MEMORY_MS;
    for (const [jobId, stop] of this.stops) if (stop.heard < forget) this.stops.delete(jobId);
    for (const [key, heard] of this.optedOut) if (heard < forget) this.optedOut.delete(key);
    try {
      await this.queue.heartbeat(this.id);
    } catch (err) {
      this.logger.warn({ err }, 'heartbeat failed');
    }
  }

  private schedulePoll(ms: number): void {
    if (this.stopping) return;
    this.pollTimer = setTimeout(() => void this.poll(), ms);
  }

  /**
   * Takes lanes due before the next poll could take them in time: due within a poll interval plus the
   * lead, since a lane's step runs JOBS_SEND_LEAD_MS before its slot. A poll that took a whole batch
   * looks again at once: many accounts due at one moment (a scheduled start shared by hundreds of
   * accounts) are all taken by then, not JOBS_CLAIM_BATCH per poll interval; replicas still share them,
   * a batch at a time.
   */
  private async poll(): Promise<void> {
    let full = false;
    try {
      const room = this.env.JOBS_MAX_LANES - this.lanes.size;
      if (room > 0) {
        const limit = Math.min(room, this.env.JOBS_CLAIM_BATCH);
        const claimed = await this.queue.claim(this.id, limit, this.env.JOBS_POLL_MS + this.queue.leadMs);
        for (const c of claimed) this.adopt(c.userId, c.dueInMs);
        if (claimed.length > 0) this.logger.debug({ lanes: claimed.length }, 'took lanes');
        full = claimed.length === limit && room > limit;
      }
      if (++this.polls % ORPHAN_CHECK_EVERY === 0) {
        for (const h of await this.queue.held(this.id)) if (!this.lanes.has(h.userId)) this.adopt(h.userId, h.dueInMs);
      }
    } catch (err) {
      this.logger.warn({ err }, 'poll failed');
    }
    this.schedulePoll(full ? 0 : this.env.JOBS_POLL_MS);
  }

  private adopt(userId: string, dueInMs: number): void {
    const lane = this.lanes.get(userId);
    if (lane) {
      lane.epoch++;
      if (!lane.running) this.schedule(userId, dueInMs);
      return;
    }
    this.lanes.set(userId, { running: false, epoch: 0, dueAt: 0 });
    this.schedule(userId, dueInMs);
  }

  /**
   * The lane's next send is due in `ms`: its step runs JOBS_SEND_LEAD_MS before that, so the send
   * is prepared by the time it is due (see `step`).
   */
  private schedule(userId: string, ms: number): void {
    const lane = this.lanes.get(userId);
    if (!lane || this.stopping) return;
    clearTimeout(lane.timer);
    lanePlanned(lane, Math.max(0, ms));
    lane.dueAt = performance.now() + Math.max(0, ms);
    lane.timer = setTimeout(() => this.run(userId), Math.max(0, Math.ceil(ms - this.queue.leadMs)));
  }

  private run(userId: string): void {
    const lane = this.lanes.get(userId);
    if (!lane || lane.running || this.stopping) return;
    lane.running = true;
    const step = this.step(userId, lane).finally(() => {
      lane.running = false;
      this.steps.delete(step);
    });
    this.steps.add(step);
  }

  private drop(userId: string, lane: Lane, epoch: number): void {
    if (lane.epoch !== epoch) {
      // Taken again while this step ran (a new job after the lane went idle): keep working it.
      this.schedule(userId, 0);
      return;
    }
    clearTimeout(lane.timer);
    this.lanes.delete(userId);
  }

  private async step(userId: string, lane: Lane): Promise<void> {
    const epoch = lane.epoch;
    try {
      let next = await this.queue.next(this.id, userId, { waitMs: this.mayWait(lane.dueAt) });
      for (;;) {
        this.outbox.publish(next.published);
        if (next.skipped) countSkipped(next.skipped);
        if (next.kind === 'lost' || next.kind === 'idle') return this.drop(userId, lane, epoch);
        if (next.kind === 'wait') return this.schedule(userId, next.waitMs);

        if (next.send.resumed) {
          this.logger.warn(
            { jobId: next.send.jobId, seq: next.send.seq },
            'resending a message left in flight by a dead worker, with the same key',
          );
        }
        // Taken ahead of its slot: it leaves on the slot itself, not before.
        lanePlanned(lane, next.send.dueAt - performance.now());
        await untilDue(next.send.dueAt);
        let outcome: SendOutcome;
        if (this.stoppedSince(next.send) || this.optedOutSince(next.send)) {
          outcome = { kind: 'withheld' };
        } else {
          laneSending(lane);
          outcome = await this.send(next.send);
        }
        // A lane due again within JOBS_SEND_LEAD_MS takes its next step in the same transaction.
        // The outcome's record may wait for company too when the lane's next slot is a whole pace away.
        const done = await this.queue.finish(this.id, next.send, outcome, {
          thenNext: !this.stopping,
          waitMs: this.outcomeWaitMs(next.send),
        });
        this.outbox.publish(done.published);
        if (done.kind === 'lost') return this.drop(userId, lane, epoch);
        if (!done.next) return this.schedule(userId, done.waitMs);
        next = done.next;
      }
    } catch (err) {
      // Database trouble: the recipient may be left `sending`; the retry resends it with its key.
      this.logger.error({ err, userId }, 'lane step failed; retrying');
      this.schedule(userId, STEP_RETRY_MS);
    }
  }

  /** How long a step whose send is due at `dueAt` may wait for other accounts' steps to share its transaction (`gatherWaitMs`). */
  private mayWait(dueAt: number): number {
    return this.stopping ? 0 : gatherWaitMs(dueAt - performance.now(), this.queue.leadMs, this.env.JOBS_STEP_GATHER_MS);
  }

  /** How long the record of `send`'s outcome may wait for company: its lane's next step is a pace away (none at delay 0). */
  private outcomeWaitMs(send: PlannedSend): number {
    return this.mayWait(performance.now() + send.paceMs - this.queue.leadMs);
  }

  private async send(send: PlannedSend): Promise<SendOutcome> {
    // Sessions may hold the reply as long as the outcome's own record may wait, so its ledger record
    // shares a commit with other accounts'.
    const recordWaitMs = Math.min(SEND_RECORD_WAIT_MAX_MS, Math.round(this.outcomeWaitMs(send)));
    const request = {
      userId: send.userId,
      jobId: send.jobId,
      to: send.phone,
      text: send.text,
      idempotencyKey: send.idempotencyKey,
      // The attachment's reference only (read with the job by the step): sessions fetches its bytes once per job.
      ...(send.media ? { media: send.media } : {}),
      ...(recordWaitMs > 0 ? { recordWaitMs } : {}),
    };
    // A NATS blip says nothing about the message: wait for the reconnect and ask again with the same
    // key (sessions answers a send it already made instead of making it twice), without spending one
    // of the message's retries or telling the user about it.
    for (let blips = 0; ; blips++) {
      try {
        return outcomeOfReply(await this.rpc.call('sessions.send', request));
      } catch (err) {
        if (!isRpcDisconnected(err) || this.stopping || blips >= MAX_RECONNECT_WAITS) return outcomeOfError(err);
        await this.rpc.whenConnected().catch(() => undefined);
      }
    }
  }
}
