import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventKey, EventOf, JobLogType, JobProgress, JobStatus } from '@bns/contracts';
import { JobLogsRepository } from '../jobs/job-logs.repository.js';
import { OutboxRepository, type OutboxEvent, type OutboxRow } from '@bns/service-kit';

export type { OutboxRow } from '@bns/service-kit';

/**
 * What one transaction has to say: job log lines and events. Everything is written inside the
 * transaction (logs to job_logs, events to the outbox), so a state change and its report commit or
 * vanish together; `commit` returns the outbox rows to publish once the transaction is done.
 */
export class JobJournal {
  private readonly events: OutboxEvent[] = [];

  constructor(
    private readonly em: EntityManager,
    private readonly userId: string,
    private readonly logs: JobLogsRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  emit<K extends EventKey>(subject: K, payload: EventOf<K>): void {
    this.events.push({ subject, payload });
  }

  async log(jobId: string, type: JobLogType, message: string): Promise<void> {
    const line = await this.logs.add(this.em, jobId, type, message);
    const timestamp = line.at.toISOString();
    this.emit('events.job.log', { eventId: `job-log:${line.id}`, userId: this.userId, at: timestamp, jobId, type, message, timestamp });
  }

  /** `nextSendAt` is part of the event id: a progress report is new when anything in it changed. */
  progress(jobId: string, status: JobStatus, progress: JobProgress, nextSendAt: Date | null = null): void {
    const next = nextSendAt?.toISOString() ?? null;
    this.emit('events.job.progress', {
      // Skipped recipients (issue 13) only appear in the id when there are some, so other ids stay as they were.
      eventId: `job-progress:${jobId}:${status}:${progress.sent}:${progress.failed}${progress.skipped ? `+${progress.skipped}` : ''}:${next ?? '-'}`,
      userId: this.userId,
      at: new Date().toISOString(),
      jobId,
      status,
      progress,
      nextSendAt: next,
    });
  }

  commit(): Promise<OutboxRow[]> {
    return this.outbox.add(this.em, this.events);
  }
}

/** Opens a journal on a transaction. */
@Injectable()
export class JobJournals {
  constructor(
    private readonly logs: JobLogsRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  open(em: EntityManager, userId: string): JobJournal {
    return new JobJournal(em, userId, this.logs, this.outbox);
  }
}
