import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_MESSAGES, type JobProgress, type JobStatus } from '@bns/contracts';
import { SERVICE_ENV } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { inTransaction, sqlOf, type Sql } from '../database/sql.js';
import { JobJournal, type OutboxRow } from '../events/job-journal.js';
import { paceMs, retryDelayMs, unlinkedRecheckMs } from './pacing.js';
import type { SendOutcome } from './send-outcome.js';

/** One message about to go out: everything `finish` needs to record its outcome. */
export interface PlannedSend {
  userId: string;
  jobId: string;
  seq: number;
  phone: string;
  text: string;
  idempotencyKey: string;
  /** Failed tries so far (temporary failures only). */
  attempts: number;
  /** Found `sending`: a worker died while sending it; the key tells sessions to answer, not resend. */
  resumed: boolean;
  /** The job was paused because the account was unlinked. */
  wasUnlinked: boolean;
  /** The pause this send was paced with. */
  paceMs: number;
}

export type NextStep =
  | { kind: 'lost'; published: OutboxRow[] }
  | { kind: 'idle'; published: OutboxRow[] }
  | { kind: 'wait'; waitMs: number; published: OutboxRow[] }
  | { kind: 'send'; send: PlannedSend; published: OutboxRow[] };

export type Finished = { kind: 'lost'; published: OutboxRow[] } | { kind: 'wait'; waitMs: number; published: OutboxRow[] };

interface JobRow {
  id: string;
  status: JobStatus;
  message: string;
  total: number;
  sent: number;
  failed: number;
  unlinked_since: Date | null;
}

const ms = (interval: number) => interval / 1000;

/**
 * The durable queue (Postgres, schema `jobs`). An account's work is a lane: the one row that holds
 * its pacing (`next_send_at`) and the worker sending for it (`holder`). A worker takes a lane only
 * when nobody holds it or its holder stopped beating its heart, and every step re-checks that it
 * still holds it under the lane's row lock, so two workers never send for one account at once.
 */
@Injectable()
export class LaneQueue {
  private readonly sql: Sql;

  constructor(
    private readonly db: DataSource,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.sql = sqlOf(db);
  }

  async heartbeat(workerId: string): Promise<void> {
    await this.sql(`INSERT INTO workers (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET seen_at = now()`, [workerId]);
  }

  /** Graceful stop: lanes are handed back at once rather than after the stale time. */
  async retire(workerId: string): Promise<void> {
    await this.sql(`UPDATE lanes SET holder = NULL, updated_at = now() WHERE holder = $1`, [workerId]);
    await this.sql(`DELETE FROM workers WHERE id = $1 OR seen_at < now() - interval '1 day'`, [workerId]);
  }

  /**
   * Takes up to `limit` lanes with work due within `lookaheadMs` that no live worker holds, or only
   * `userId`'s lane (whenever due). Returns each with how long until its next send.
   */
  async claim(workerId: string, limit: number, lookaheadMs: number, userId?: string): Promise<{ userId: string; dueInMs: number }[]> {
    const rows = await this.sql<{ user_id: string; due_in_ms: number }>(
      `UPDATE lanes l SET holder = $1, updated_at = now()
         FROM (SELECT c.user_id FROM lanes c
                WHERE c.active
                  AND ($5::text IS NULL AND c.next_send_at <= now() + make_interval(secs => $3) OR c.user_id = $5)
                  AND c.holder IS DISTINCT FROM $1
                  AND (c.holder IS NULL OR NOT EXISTS (
                        SELECT 1 FROM workers w WHERE w.id = c.holder AND w.seen_at > now() - make_interval(secs => $4)))
                ORDER BY c.next_send_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED) AS free
        WHERE l.user_id = free.user_id
      RETURNING l.user_id, greatest(0, extract(epoch FROM l.next_send_at - clock_timestamp()) * 1000)::float8 AS due_in_ms`,
      [workerId, limit, ms(lookaheadMs), ms(this.env.JOBS_WORKER_STALE_MS), userId ?? null],
    );
    return rows.map((r) => ({ userId: r.user_id, dueInMs: r.due_in_ms }));
  }

  /** Lanes the database says this worker holds (a safety net against losing one in memory). */
  async held(workerId: string): Promise<{ userId: string; dueInMs: number }[]> {
    const rows = await this.sql<{ user_id: string; due_in_ms: number }>(
      `SELECT user_id, greatest(0, extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS due_in_ms
         FROM lanes WHERE holder = $1 AND active`,
      [workerId],
    );
    return rows.map((r) => ({ userId: r.user_id, dueInMs: r.due_in_ms }));
  }

  /**
   * The lane's next step: the oldest unfinished job's first open recipient, marked `sending` and the
   * lane's next slot booked, all in one transaction. A recipient already `sending` was left by a dead
   * worker and goes out again with the same key.
   */
  next(workerId: string, userId: string): Promise<NextStep> {
    return inTransaction(this.db, async (sql) => {
      const [lane] = await sql<{ holder: string | null; wait_ms: number }>(
        `SELECT holder, (extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS wait_ms FROM lanes WHERE user_id = $1 FOR UPDATE`,
        [userId],
      );
      if (!lane || lane.holder !== workerId) return { kind: 'lost', published: [] };
      if (lane.wait_ms > 1) return { kind: 'wait', waitMs: lane.wait_ms, published: [] };

      const [job] = await sql<JobRow>(
        `SELECT id, status, message, total, sent, failed, unlinked_since FROM jobs
          WHERE user_id = $1 AND status IN ('queued', 'running') ORDER BY created_at, id LIMIT 1 FOR UPDATE`,
        [userId],
      );
      if (!job) {
        // A start in flight upserts the lane first, so it waits for this lock and reactivates the lane.
        await sql(`UPDATE lanes SET active = false, holder = NULL, updated_at = now() WHERE user_id = $1`, [userId]);
        return { kind: 'idle', published: [] };
      }
      const journal = new JobJournal(sql, userId);
      if (job.status === 'queued') {
        await sql(`UPDATE jobs SET status = 'running', started_at = now() WHERE id = $1`, [job.id]);
        job.status = 'running';
        await journal.log(job.id, 'info', JOB_MESSAGES.jobStarted(job.total));
        journal.progress(job.id, 'running', progressOf(job));
      }
      const [recipient] = await sql<{ seq: number; phone: string; text: string; attempts: number; state: string }>(
        `SELECT seq, phone, coalesce(text, $2) AS text, attempts, state FROM job_recipients
          WHERE job_id = $1 AND state IN ('pending', 'sending') ORDER BY seq LIMIT 1`,
        [job.id, job.message],
      );
      if (!recipient) {
        await this.complete(sql, journal, job);
        return { kind: 'wait', waitMs: 0, published: await journal.commit() };
      }
      const pace = paceMs(this.env.SEND_DELAY_MS, this.env.SEND_JITTER_MS);
      await sql(`UPDATE job_recipients SET state = 'sending', next_attempt_at = NULL WHERE job_id = $1 AND seq = $2`, [job.id, recipient.seq]);
      await sql(`UPDATE lanes SET next_send_at = clock_timestamp() + make_interval(secs => $2), updated_at = now() WHERE user_id = $1`, [userId, ms(pace)]);
      return {
        kind: 'send',
        send: {
          userId,
          jobId: job.id,
          seq: recipient.seq,
          phone: recipient.phone,
          text: recipient.text,
          idempotencyKey: `${job.id}:${recipient.phone}`,
          attempts: recipient.attempts,
          resumed: recipient.state === 'sending',
          wasUnlinked: job.unlinked_since !== null,
          paceMs: pace,
        },
        published: await journal.commit(),
      };
    });
  }

  /** Records what became of a planned send and books the lane's next step. */
  finish(workerId: string, send: PlannedSend, outcome: SendOutcome): Promise<Finished> {
    return inTransaction(this.db, async (sql) => {
      const journal = new JobJournal(sql, send.userId);
      /** Lane's next slot: at least what `next` booked; later for retries and pauses. */
      let notBefore = 0;
      let nextFromDuplicate: Date | undefined;
      let sentFloor: Date | undefined;
      switch (outcome.kind) {
        case 'sent': {
          const done = await sql(
            `UPDATE job_recipients SET state = 'sent', done_at = $3, error = NULL
              WHERE job_id = $1 AND seq = $2 AND state = 'sending' RETURNING 1`,
            [send.jobId, send.seq, outcome.at],
          );
          if (done.length === 0) break; // another worker recorded it after taking over
          const job = await this.count(sql, send.jobId, 'sent');
          if (send.wasUnlinked) await journal.log(send.jobId, 'info', JOB_MESSAGES.resumed);
          await journal.log(send.jobId, 'success', JOB_MESSAGES.messageSent(send.phone));
          this.messageStatus(journal, send, 'sent', outcome.at, undefined, outcome.messageId);
          if (job.status === 'completed') await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
          // Sent before a crash: nothing went out now, so the next message only keeps the gap to that one.
          if (outcome.duplicate) nextFromDuplicate = new Date(outcome.at.getTime() + send.paceMs);
          // The gap that matters is between messages as they really left; a slow send pushes the next one.
          else sentFloor = new Date(outcome.at.getTime() + send.paceMs);
          break;
        }
        case 'permanent':
          await this.fail(sql, journal, send, outcome.error);
          break;
        case 'transient': {
          const retry = send.attempts + 1;
          if (retry > this.env.JOB_MAX_RETRIES) {
            await this.fail(sql, journal, send, outcome.error);
            break;
          }
          notBefore = retryDelayMs(retry, this.env.JOB_RETRY_BASE_MS);
          const back = await sql(
            `UPDATE job_recipients SET state = 'pending', attempts = attempts + 1, error = $3,
                    next_attempt_at = now() + make_interval(secs => $4)
              WHERE job_id = $1 AND seq = $2 AND state = 'sending' RETURNING 1`,
            [send.jobId, send.seq, outcome.error, ms(notBefore)],
          );
          if (back.length > 0) {
            await journal.log(
              send.jobId,
              'warning',
              JOB_MESSAGES.retrying(send.phone, retry, this.env.JOB_MAX_RETRIES, Math.round(notBefore / 1000)),
            );
          }
          break;
        }
        case 'busy':
          notBefore = this.env.JOB_RETRY_BASE_MS;
          await sql(`UPDATE job_recipients SET state = 'pending' WHERE job_id = $1 AND seq = $2 AND state = 'sending'`, [send.jobId, send.seq]);
          break;
        case 'unlinked':
          notBefore = await this.pauseUnlinked(sql, journal, send);
          break;
      }
      const [lane] = await sql<{ next_send_at: Date; wait_ms: number }>(
        `UPDATE lanes SET updated_at = now(),
                next_send_at = CASE WHEN $4::timestamptz IS NOT NULL THEN least(next_send_at, greatest(now(), $4::timestamptz))
                                    ELSE greatest(next_send_at, now() + make_interval(secs => $3), coalesce($5::timestamptz, '-infinity')) END
          WHERE user_id = $1 AND holder = $2
        RETURNING next_send_at, greatest(0, extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS wait_ms`,
        [send.userId, workerId, ms(notBefore), nextFromDuplicate ?? null, sentFloor ?? null],
      );
      const [job] = await sql<JobRow>(`SELECT id, status, message, total, sent, failed, unlinked_since FROM jobs WHERE id = $1`, [send.jobId]);
      journal.progress(send.jobId, job!.status, progressOf(job!), job!.status === 'running' ? (lane?.next_send_at ?? null) : null);
      const published = await journal.commit();
      return lane ? { kind: 'wait', waitMs: lane.wait_ms, published } : { kind: 'lost', published };
    });
  }

  private async fail(sql: Sql, journal: JobJournal, send: PlannedSend, error: string): Promise<void> {
    const done = await sql(
      `UPDATE job_recipients SET state = 'failed', attempts = attempts + 1, error = $3, done_at = now()
        WHERE job_id = $1 AND seq = $2 AND state = 'sending' RETURNING done_at`,
      [send.jobId, send.seq, error],
    );
    if (done.length === 0) return;
    const job = await this.count(sql, send.jobId, 'failed');
    await journal.log(send.jobId, 'error', JOB_MESSAGES.messageFailed(send.phone, error));
    this.messageStatus(journal, send, 'failed', new Date(), error);
    if (job.status === 'completed') await journal.log(send.jobId, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
  }

  /** One more sent or failed; the job completes with its last recipient (a cancelled job stays cancelled). */
  private async count(sql: Sql, jobId: string, column: 'sent' | 'failed'): Promise<JobRow> {
    const [job] = await sql<JobRow>(
      `UPDATE jobs SET ${column} = ${column} + 1,
              unlinked_since = CASE WHEN $2 THEN NULL ELSE unlinked_since END,
              status = CASE WHEN status = 'running' AND sent + failed + 1 >= total THEN 'completed' ELSE status END,
              finished_at = CASE WHEN status = 'running' AND sent + failed + 1 >= total THEN now() ELSE finished_at END
        WHERE id = $1 RETURNING id, status, message, total, sent, failed, unlinked_since`,
      [jobId, column === 'sent'],
    );
    return job!;
  }

  private async complete(sql: Sql, journal: JobJournal, job: JobRow): Promise<void> {
    await sql(`UPDATE jobs SET status = 'completed', finished_at = now() WHERE id = $1`, [job.id]);
    await journal.log(job.id, 'success', JOB_MESSAGES.jobCompleted(job.sent, job.failed));
    journal.progress(job.id, 'completed', progressOf(job));
  }

  /** Not linked: the recipient waits, the job pauses, and fails once the account stayed unlinked too long. */
  private async pauseUnlinked(sql: Sql, journal: JobJournal, send: PlannedSend): Promise<number> {
    await sql(`UPDATE job_recipients SET state = 'pending' WHERE job_id = $1 AND seq = $2 AND state = 'sending'`, [send.jobId, send.seq]);
    const [job] = await sql<{ status: JobStatus; first: boolean; unlinked_ms: number }>(
      `UPDATE jobs SET unlinked_since = coalesce(unlinked_since, now()) WHERE id = $1
       RETURNING status, unlinked_since = now() AS first, (extract(epoch FROM now() - unlinked_since) * 1000)::float8 AS unlinked_ms`,
      [send.jobId],
    );
    if (!job || job.status !== 'running') return 0;
    const timeout = this.env.JOB_UNLINKED_TIMEOUT_MS;
    if (job.unlinked_ms >= timeout) {
      const reason = JOB_MESSAGES.unlinkedTooLong(timeout);
      await sql(`UPDATE jobs SET status = 'failed', error = $2, finished_at = now() WHERE id = $1`, [send.jobId, reason]);
      await journal.log(send.jobId, 'error', reason);
      return 0;
    }
    if (job.first) await journal.log(send.jobId, 'warning', JOB_MESSAGES.waitingForLink);
    return unlinkedRecheckMs(job.unlinked_ms, timeout, this.env.JOB_UNLINKED_RECHECK_MAX_MS);
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

function progressOf(job: Pick<JobRow, 'total' | 'sent' | 'failed'>): JobProgress {
  return { total: job.total, sent: job.sent, failed: job.failed };
}
