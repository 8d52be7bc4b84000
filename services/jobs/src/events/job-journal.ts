import type { EventKey, EventOf, JobLogType, JobProgress, JobStatus } from '@bns/contracts';
import type { Sql } from '../database/sql.js';

export interface OutboxRow {
  id: string;
  subject: EventKey;
  payload: EventOf<EventKey>;
}

/**
 * What one transaction has to say: job log lines and events. Everything is written inside the
 * transaction (logs to job_logs, events to the outbox), so a state change and its report commit or
 * vanish together; `commit` returns the outbox rows to publish once the transaction is done.
 */
export class JobJournal {
  private readonly events: { subject: EventKey; payload: EventOf<EventKey> }[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly userId: string,
  ) {}

  emit<K extends EventKey>(subject: K, payload: EventOf<K>): void {
    this.events.push({ subject, payload });
  }

  async log(jobId: string, type: JobLogType, message: string): Promise<void> {
    const [row] = await this.sql<{ id: string; at: Date }>(
      `INSERT INTO job_logs (job_id, type, message) VALUES ($1, $2, $3) RETURNING id::text, at`,
      [jobId, type, message],
    );
    const timestamp = row!.at.toISOString();
    this.emit('events.job.log', { eventId: `job-log:${row!.id}`, userId: this.userId, at: timestamp, jobId, type, message, timestamp });
  }

  /** `nextSendAt` is part of the event id: a progress report is new when anything in it changed. */
  progress(jobId: string, status: JobStatus, progress: JobProgress, nextSendAt: Date | null = null): void {
    const next = nextSendAt?.toISOString() ?? null;
    this.emit('events.job.progress', {
      eventId: `job-progress:${jobId}:${status}:${progress.sent}:${progress.failed}:${next ?? '-'}`,
      userId: this.userId,
      at: new Date().toISOString(),
      jobId,
      status,
      progress,
      nextSendAt: next,
    });
  }

  async commit(): Promise<OutboxRow[]> {
    if (this.events.length === 0) return [];
    const rows = await this.sql<{ id: string }>(
      `INSERT INTO outbox (subject, payload) SELECT * FROM unnest($1::text[], $2::jsonb[]) RETURNING id::text`,
      [this.events.map((e) => e.subject), this.events.map((e) => JSON.stringify(e.payload))],
    );
    return rows.map((r, i) => ({ id: r.id, subject: this.events[i]!.subject, payload: this.events[i]!.payload }));
  }
}
