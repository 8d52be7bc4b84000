import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  checkStartJob,
  estimateMinutes,
  JOB_MESSAGES,
  JobsErrorCode,
  parseSince,
  type JobLogEntry,
  type JobLogType,
  type JobRef,
  type JobStatus,
  type JobView,
  type StartJobReply,
  type StartJobRequest,
} from '@bns/contracts';
import { AppError, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { inTransaction, sqlOf, type Sql } from '../database/sql.js';
import { JobJournal } from '../events/job-journal.js';
import { OutboxPublisher } from '../events/outbox-publisher.js';
import { LaneWorker } from '../queue/lane-worker.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** States of `sessions.status` in which the account can send. */
const LINKED_STATES = new Set(['ready', 'exist']);

interface JobRow {
  id: string;
  status: JobStatus;
  total: number;
  sent: number;
  failed: number;
  error: string | null;
  estimated_minutes: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  next_send_at: Date | null;
}

@Injectable()
export class JobsService {
  private readonly logger = new Logger('JobsService');
  private readonly sql: Sql;

  constructor(
    private readonly db: DataSource,
    private readonly rpc: RpcClient,
    private readonly outbox: OutboxPublisher,
    private readonly worker: LaneWorker,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {
    this.sql = sqlOf(db);
  }

  /**
   * Checks the request (SPEC §5 words), checks the account is linked, then stores the job and all its
   * recipients in one transaction. The user's lane is reactivated; the job queues behind a running one.
   */
  async start(req: StartJobRequest): Promise<StartJobReply> {
    const check = checkStartJob(req, { maxRecipients: this.env.MAX_RECIPIENTS_PER_JOB });
    if (!check.ok) throw AppError.validation(check.code, check.message, undefined, check.details);

    const link = await this.rpc.call('sessions.status', { userId: req.userId });
    if (!LINKED_STATES.has(link.state)) throw AppError.conflict(JobsErrorCode.NotLinked, JOB_MESSAGES.notLinked, { state: link.state });

    const jobId = randomUUID();
    const total = check.recipients.length;
    const estimatedTime = estimateMinutes(total, this.env.SEND_DELAY_MS);
    const clientId = typeof req.clientId === 'string' ? req.clientId.slice(0, 200) : null;
    const published = await inTransaction(this.db, async (sql) => {
      // The lane first: it serialises this user's starts with the worker's "no more work" decision.
      await sql(
        `INSERT INTO lanes (user_id) VALUES ($1)
         ON CONFLICT (user_id) DO UPDATE SET active = true, updated_at = now()`,
        [req.userId],
      );
      const [ahead] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE user_id = $1 AND status IN ('queued', 'running')`, [req.userId]);
      await sql(
        `INSERT INTO jobs (id, user_id, client_id, message, total, delay_ms, estimated_minutes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [jobId, req.userId, clientId, req.message, total, this.env.SEND_DELAY_MS, estimatedTime],
      );
      await sql(
        `INSERT INTO job_recipients (job_id, seq, phone, text)
         SELECT $1, r.seq, r.phone, r.text FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS r(phone, text, seq)`,
        [jobId, check.recipients.map((r) => r.phone), check.personalised ? check.recipients.map((r) => r.text) : []],
      );
      const journal = new JobJournal(sql, req.userId);
      if (ahead!.n > 0) await journal.log(jobId, 'info', JOB_MESSAGES.jobQueued);
      journal.progress(jobId, 'queued', { total, sent: 0, failed: 0 });
      return journal.commit();
    });
    this.outbox.publish(published);
    this.logger.log({ jobId, userId: req.userId, total, personalised: check.personalised }, 'job accepted');
    await this.worker.kick(req.userId).catch((err: unknown) => this.logger.warn({ err }, 'kick failed; the next poll takes the lane'));
    return { jobId, estimatedTime, status: 'queued', total };
  }

  async status({ userId, jobId }: JobRef): Promise<{ job: JobView }> {
    return { job: await this.view(this.sql, userId, jobId) };
  }

  /** Entries strictly after `since`, oldest first, a page at a time (the next poll's `since` continues). */
  async logs({ userId, jobId, since }: JobRef & { since?: string }): Promise<{ logs: JobLogEntry[] }> {
    const after = parseSince(since);
    if (after === null) throw AppError.validation(JobsErrorCode.InvalidSince, JOB_MESSAGES.invalidSince);
    await this.find(this.sql, userId, jobId);
    const limit = this.env.JOB_LOGS_PAGE_MAX;
    const rows = await this.sql<{ type: JobLogType; message: string; at: Date }>(
      `SELECT type, message, at FROM job_logs WHERE job_id = $1 AND at > $2 ORDER BY at, id LIMIT $3`,
      [jobId, after ?? new Date(0), limit],
    );
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
    const published = await inTransaction(this.db, async (sql) => {
      const job = await this.find(sql, userId, jobId, true);
      if (job.status === 'cancelled') return [];
      if (job.status === 'completed' || job.status === 'failed') {
        throw AppError.conflict(JobsErrorCode.AlreadyFinished, JOB_MESSAGES.alreadyFinished, { status: job.status });
      }
      await sql(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE id = $1`, [jobId]);
      const journal = new JobJournal(sql, userId);
      await journal.log(jobId, 'warning', JOB_MESSAGES.jobCancelled);
      journal.progress(jobId, 'cancelled', { total: job.total, sent: job.sent, failed: job.failed });
      return journal.commit();
    });
    this.outbox.publish(published);
    return { job: await this.view(this.sql, userId, jobId) };
  }

  /** Another user's job, and an id that is not a job id at all, are both simply not found. */
  private async find(sql: Sql, userId: string, jobId: string, lock = false): Promise<JobRow> {
    if (typeof jobId !== 'string' || !UUID.test(jobId)) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    const [job] = await sql<JobRow>(
      `SELECT j.id, j.status, j.total, j.sent, j.failed, j.error, j.estimated_minutes, j.created_at, j.started_at, j.finished_at,
              CASE WHEN j.status = 'running' THEN l.next_send_at END AS next_send_at
         FROM jobs j LEFT JOIN lanes l ON l.user_id = j.user_id
        WHERE j.id = $1 AND j.user_id = $2 ${lock ? 'FOR UPDATE OF j' : ''}`,
      [jobId, userId],
    );
    if (!job) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    return job;
  }

  private async view(sql: Sql, userId: string, jobId: string): Promise<JobView> {
    const job = await this.find(sql, userId, jobId);
    const limit = this.env.JOB_STATUS_LIST_MAX;
    // The newest `limit` of each list, shown oldest first like the lists grow.
    const done = await sql<{ phone: string; state: 'sent' | 'failed'; done_at: Date; error: string | null }>(
      `(SELECT phone, state, done_at, error FROM job_recipients WHERE job_id = $1 AND state = 'sent' ORDER BY done_at DESC, seq DESC LIMIT $2)
       UNION ALL
       (SELECT phone, state, done_at, error FROM job_recipients WHERE job_id = $1 AND state = 'failed' ORDER BY done_at DESC, seq DESC LIMIT $2)`,
      [jobId, limit],
    );
    done.reverse();
    return {
      jobId: job.id,
      status: job.status,
      progress: { total: job.total, sent: job.sent, failed: job.failed },
      results: {
        successList: done.filter((r) => r.state === 'sent').map((r) => ({ originalNumber: r.phone, timestamp: r.done_at.toISOString() })),
        failedList: done
          .filter((r) => r.state === 'failed')
          .map((r) => ({ phoneNumber: r.phone, timestamp: r.done_at.toISOString(), error: r.error ?? JOB_MESSAGES.sendFailed })),
      },
      error: job.error,
      estimatedTime: job.estimated_minutes,
      nextSendAt: job.next_send_at ? job.next_send_at.toISOString() : null,
      createdAt: job.created_at.toISOString(),
      startedAt: job.started_at?.toISOString() ?? null,
      finishedAt: job.finished_at?.toISOString() ?? null,
    };
  }
}
