import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventKey, EventOf, JobLogType, JobProgress, JobStatus } from '@bns/contracts';
import type { Batch } from '@bns/service-kit';
import { JobLogsRepository, SENT_LINE_TYPE, sentLine } from './job-logs.repository.js';
import { AppError, OutboxRepository, rpcDeadlinePassed, type OutboxEvent, type OutboxRow } from '@bns/service-kit';

export type { OutboxRow } from '@bns/service-kit';

/** A log line waiting for its row: its event is made once the database has given it an id and a time. */
interface PendingLog {
  jobId: string;
  type: JobLogType;
  message: string;
  at?: Date;
}
type Entry = { event: OutboxEvent } | { log: PendingLog };

/** A log line's `events.job.log`, stored or read from a sent recipient alike; `id` is the line's, unique per job log. */
function logEvent(
  userId: string,
  id: string,
  line: Pick<PendingLog, 'jobId' | 'type' | 'message'>,
  at: Date,
): OutboxEvent {
  const timestamp = at.toISOString();
  const { jobId, type, message } = line;
  return {
    subject: 'events.job.log',
    payload: { eventId: `job-log:${id}`, userId, at: timestamp, jobId, type, message, timestamp },
  };
}

/**
 * What one transaction has to say: job log lines and events. Everything is written inside the
 * transaction (logs to job_logs, events to the outbox), so a state change and its report commit or
 * vanish together; `commit` returns the outbox rows to publish once the transaction is done.
 *
 * Lines and events are written at `commit`, in two multi-row statements. In a batched transaction
 * (`JobJournals.open` with the batch) the journals of every unit in it are written together at the
 * batch's end: still two statements, for all of them. The rows `commit` returned are filled in then,
 * before the transaction commits, so they are complete by the time anyone can publish them.
 */
export class JobJournal {
  private readonly entries: Entry[] = [];
  /** Filled by `write`. */
  readonly published: OutboxRow[] = [];

  constructor(
    private readonly em: EntityManager,
    private readonly userId: string,
    private readonly writer: JournalWriter,
    private readonly batch?: Batch,
  ) {}

  emit<K extends EventKey>(subject: K, payload: EventOf<K>): void {
    this.entries.push({ event: { subject, payload } });
  }

  /**
   * Adds a line to the job's log (and its `events.job.log`), written at commit; stamped then, or at
   * `at` (a millisecond time) when what it says happened at a known moment.
   */
  async log(jobId: string, type: JobLogType, message: string, at?: Date): Promise<void> {
    this.entries.push({ log: { jobId, type, message, ...(at ? { at } : {}) } });
  }

  /**
   * A recipient's "Message sent" line: its `events.job.log`, and no row (the recipient's row, sent at
   * `at`, is the line: `JobLogsRepository.page`). The event's id names the recipient, so a republish
   * after a crash is the same event.
   */
  sent(jobId: string, seq: number, phone: string, at: Date): void {
    const line = { jobId, type: SENT_LINE_TYPE, message: sentLine(phone) };
    this.entries.push({ event: logEvent(this.userId, `sent:${jobId}:${seq}`, line, at) });
  }

  /** `nextSendAt` is part of the event id: a progress report is new when anything in it changed. */
  progress(jobId: string, status: JobStatus, progress: JobProgress, nextSendAt: Date | null = null): void {
    const next = nextSendAt?.toISOString() ?? null;
    this.emit('events.job.progress', {
      // Skipped recipients (opted out, not on WhatsApp) only appear in the id when there are some, so other ids stay as they were.
      eventId: `job-progress:${jobId}:${status}:${progress.sent}:${progress.failed}${progress.skipped ? `+${progress.skipped}` : ''}:${next ?? '-'}`,
      userId: this.userId,
      at: new Date().toISOString(),
      jobId,
      status,
      progress,
      nextSendAt: next,
    });
  }

  /** Writes the lines and events (or leaves them to the batch's end); the outbox rows to publish after commit. */
  async commit(): Promise<OutboxRow[]> {
    if (this.batch) this.writer.defer(this.batch, this);
    else await this.writer.write(this.em, [this]);
    return this.published;
  }

  /** @internal the writer's view of what is pending. */
  take(): { userId: string; entries: Entry[] } {
    return { userId: this.userId, entries: this.entries.splice(0) };
  }
}

/** Writes journals: every log line of all of them in one statement, then every event in one more. */
@Injectable()
export class JournalWriter {
  private readonly pending = new WeakMap<Batch, JobJournal[]>();

  constructor(
    private readonly logs: JobLogsRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  defer(batch: Batch, journal: JobJournal): void {
    let journals = this.pending.get(batch);
    if (!journals) {
      journals = [];
      this.pending.set(batch, journals);
      batch.atEnd('job-journal', (em) => this.write(em, this.pending.get(batch) ?? []));
    }
    journals.push(journal);
  }

  async write(em: EntityManager, journals: readonly JobJournal[]): Promise<void> {
    const taken = journals.map((j) => ({ journal: j, ...j.take() }));
    const lines = taken.flatMap((t) => t.entries.flatMap((e) => ('log' in e ? [e.log] : [])));
    const stamped = await this.logs.addMany(em, lines);
    let next = 0;
    const events: OutboxEvent[] = [];
    const owners: JobJournal[] = [];
    for (const t of taken) {
      for (const e of t.entries) {
        if ('event' in e) events.push(e.event);
        else {
          const line = stamped[next++]!;
          events.push(logEvent(t.userId, line.id, e.log, line.at));
        }
        owners.push(t.journal);
      }
    }
    const rows = await this.outbox.add(em, events);
    rows.forEach((r, i) => owners[i]!.published.push(r));
  }
}

/** Opens a journal on a transaction (or on a batched one: then it is written with the others at the batch's end). */
@Injectable()
export class JobJournals {
  constructor(private readonly writer: JournalWriter) {}

  open(em: EntityManager, userId: string, batch?: Batch): JobJournal {
    return new JobJournal(em, userId, this.writer, batch);
  }
}

/**
 * Writes the journal and lets the transaction commit only while its caller still waits: when the
 * gateway gave up on the request (Postgres or a queue held it past the deadline), it answered 503, so
 * the change (a start, a pause, a resume) must not happen now; throwing rolls it back.
 */
export async function commitInTime(journal: JobJournal): Promise<OutboxRow[]> {
  const published = await journal.commit();
  if (rpcDeadlinePassed()) throw AppError.unavailable();
  return published;
}
