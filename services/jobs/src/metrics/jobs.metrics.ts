import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { JOB_MESSAGES, JOB_STATUSES, SESSION_MESSAGES, type EventKey, type SkipReason } from '@bns/contracts';
import { counter, gauge, histogram, type KitContext } from '@bns/service-kit';
import { QueueStateRepository, type QueueState } from './queue-state.repository.js';

/**
 * The jobs service's own metrics. Counters are fed by hooks (the outbox publisher, the lane worker,
 * and the job start for skips); the queue's state is read from the database when Prometheus scrapes,
 * so the send path does no extra work for it. Every replica reports the same database-wide gauges: aggregate them
 * with max(), not sum(). No label carries a user id, phone number or job id.
 */
const messages = counter({
  name: 'bns_jobs_messages_total',
  help: 'Messages whose fate jobs recorded, by result (sent, failed, skipped) and reason',
  labelNames: ['result', 'reason'],
});
const jobsFinished = counter({
  name: 'bns_jobs_finished_total',
  help: 'Jobs that reached an end state, by status (completed, failed, cancelled)',
  labelNames: ['status'],
});
const paceLag = histogram({
  name: 'bns_jobs_pace_lag_seconds',
  help: 'Actual minus planned send time of each message: how late after its slot the lane sent it (the step itself is prepared ahead of the slot)',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

const stepBatch = histogram({
  name: 'bns_jobs_step_batch_size',
  help: 'Lane steps (of different accounts) that shared one database transaction; mode=alone when a failed batch ran them one by one',
  labelNames: ['mode'],
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
});

/** Feeds `bns_jobs_step_batch_size` (the lane queue's TransactionBatcher hook). */
export function countStepBatch(size: number, alone: boolean): void {
  stepBatch.observe({ mode: alone ? 'alone' : 'batched' }, size);
}

/** Failure reasons are a fixed set, matched on the contract's message texts (never the free text). */
function reasonOf(error: string | undefined): string {
  if (!error) return 'none';
  if (error === SESSION_MESSAGES.notOnWhatsApp) return 'not_on_whatsapp';
  if (error === JOB_MESSAGES.sessionsUnavailable) return 'sessions_unavailable';
  if (error === JOB_MESSAGES.sendFailed) return 'send_failed';
  if (error === JOB_MESSAGES.notLinked || /disconnected|not connected/i.test(error)) return 'unlinked';
  if (/cancel/i.test(error)) return 'cancelled';
  if (/opt(ed)?[- ]?out/i.test(error)) return 'opted_out';
  return 'other';
}

const RESULTS = new Set(['sent', 'failed', 'skipped']);
const END_STATES = new Set(['completed', 'failed', 'cancelled']);

/** Hook: every event row the outbox publishes after its transaction committed. */
export function countPublished(rows: ReadonlyArray<{ subject: EventKey; payload: unknown }>): void {
  for (const { subject, payload } of rows) {
    const p = payload as { status?: string; error?: string; reason?: string };
    if (subject === 'events.message.status' && p.status && RESULTS.has(p.status)) {
      messages.inc({ result: p.status, reason: p.status === 'sent' ? 'none' : reasonOf(p.reason ?? p.error) });
    } else if (subject === 'events.job.progress' && p.status && END_STATES.has(p.status)) {
      jobsFinished.inc({ status: p.status });
    }
  }
}

/**
 * Hook: recipients a job skipped (opted out or not on WhatsApp), by reason (`opted_out`, `not_on_whatsapp`): at
 * start by the jobs service, mid-job by the lane worker, once their transaction committed.
 */
export function countSkipped(reasons: Iterable<SkipReason>): void {
  for (const reason of reasons) messages.inc({ result: 'skipped', reason });
}

const plannedAt = new WeakMap<object, number>();
/** Hook: a lane's next send is due `ms` from now (negative: it was due that long ago). */
export function lanePlanned(lane: object, ms: number): void {
  plannedAt.set(lane, Date.now() + ms);
}
/** Hook: the lane is about to send the message it was timed for. */
export function laneSending(lane: object): void {
  const planned = plannedAt.get(lane);
  if (planned !== undefined) paceLag.observe(Math.max(0, Date.now() - planned) / 1000);
}

const CACHE_MS = 2000;
/** Runs `read` at most every CACHE_MS, so several scrapers cost one set of queries. */
function cached<T>(read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > CACHE_MS) last = { at: Date.now(), value: read() };
    return last.value;
  };
}

/** Registered by main.ts: gauges read from the jobs schema on scrape. */
export function registerJobsMetrics(ctx: KitContext): void {
  const db = ctx.dataSource as DataSource;
  const logger = new Logger('JobsMetrics');
  const queue = new QueueStateRepository();
  const state = cached(async (): Promise<QueueState | undefined> => {
    try {
      return await queue.read(db.manager);
    } catch (err) {
      logger.warn({ err }, 'could not read the queue state for /metrics');
      return undefined;
    }
  });
  gauge({
    name: 'bns_jobs_queue_depth',
    help: 'Recipients waiting to be sent (pending or being sent), all replicas',
    async collect() {
      const s = await state();
      if (s) this.set(s.pending);
    },
  });
  gauge({
    name: 'bns_jobs_lanes',
    help: 'Accounts with work to send (active) and those a live or dead worker holds (held), all replicas',
    labelNames: ['state'],
    async collect() {
      const s = await state();
      if (!s) return;
      this.set({ state: 'active' }, s.lanesActive);
      this.set({ state: 'held' }, s.lanesHeld);
    },
  });
  gauge({
    name: 'bns_jobs_outbox_backlog',
    help: 'Events written but not yet published to JetStream (and published ones whose rows the next write, or 100 ms, deletes)',
    async collect() {
      const s = await state();
      if (s) this.set(s.outbox);
    },
  });
  gauge({
    name: 'bns_jobs_outbox_oldest_seconds',
    help: 'Age of the oldest event in the outbox (0 when it is empty)',
    async collect() {
      const s = await state();
      if (s) this.set(s.outboxAgeSeconds);
    },
  });
  gauge({
    name: 'bns_jobs_jobs',
    help: 'Jobs by status, all replicas',
    labelNames: ['status'],
    async collect() {
      const s = await state();
      if (!s) return;
      this.reset();
      for (const status of JOB_STATUSES) this.set({ status }, 0);
      for (const row of s.jobs) this.set({ status: row.status }, row.n);
    },
  });
}
