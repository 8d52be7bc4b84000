import { Inject, Injectable, Logger } from '@nestjs/common';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import {
  isUuid,
  EXPORT_ACK,
  EXPORT_CONTENT_TYPES,
  EXPORT_STREAM_HEADERS,
  firstIssue,
  JOB_MESSAGES,
  JobResultsErrorCode,
  JobsErrorCode,
  jobExportQuerySchema,
  jobHistoryQuerySchema,
  jobResultsQuerySchema,
  LIMITS,
  RESULTS_LIMITS,
  RESULTS_MESSAGES,
  type ExportFormat,
  type JobExportStart,
  type JobHistoryPage,
  type JobResultsPage,
  type RecipientResult,
  type RequestOf,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, Transactions } from '@bns/service-kit';
import { csvWriter, exportFileName, xlsxWriter, type ReportWriter } from './report-writers.js';
import { ResultsRepository, type ReportRow } from './results.repository.js';

/** The per-recipient report, its export and the campaign history. */
@Injectable()
export class ResultsService {
  private readonly logger = new Logger('ResultsService');

  constructor(
    private readonly tx: Transactions,
    private readonly results: ResultsRepository,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  /**
   * A page of the report in list order; the cursor is the position of the last row given out. A page
   * ends at `limit` rows or at RESULTS_LIMITS.pageBytesMax of JSON, whichever comes first (always at
   * least one row), so its answer fits in one NATS message whatever the rows carry: jobs stored before
   * the variables' size rules may have rows of many kilobytes.
   */
  async page(req: RequestOf<'jobs.results'>): Promise<JobResultsPage> {
    const query = jobResultsQuerySchema.safeParse({
      status: req.status,
      q: req.q,
      cursor: req.cursor,
      limit: req.limit,
    });
    if (!query.success) throw AppError.validation(JobResultsErrorCode.InvalidQuery, firstIssue(query.error));
    await this.ownedJob(req.userId, req.jobId);
    const after = parseSeqCursor(query.data.cursor);
    const found = await this.results.page(
      this.tx.manager,
      req.jobId,
      after,
      query.data.limit + 1,
      query.data.status,
      query.data.q,
    );
    const results: RecipientResult[] = [];
    let bytes = 0;
    for (const row of found.slice(0, query.data.limit)) {
      const result = toResult(row);
      // Its JSON and the comma before the next one.
      const size = Buffer.byteLength(JSON.stringify(result)) + 1;
      if (results.length > 0 && bytes + size > RESULTS_LIMITS.pageBytesMax) break;
      results.push(result);
      bytes += size;
    }
    const more = found.length > results.length;
    return { results, nextCursor: more ? String(found[results.length - 1]!.seq) : null };
  }

  /** The user's jobs, newest first. */
  async history(req: RequestOf<'jobs.list'>): Promise<JobHistoryPage> {
    const query = jobHistoryQuerySchema.safeParse({ cursor: req.cursor, limit: req.limit, active: req.active });
    if (!query.success) throw AppError.validation(JobResultsErrorCode.InvalidQuery, firstIssue(query.error));
    const cursor = query.data.cursor;
    if (
      cursor !== undefined &&
      (!isUuid(cursor) || !(await this.results.ownsJob(this.tx.manager, req.userId, cursor)))
    ) {
      throw AppError.validation(JobResultsErrorCode.InvalidQuery, RESULTS_MESSAGES.invalidCursor);
    }
    const limit = query.data.limit;
    const found = await this.results.history(
      this.tx.manager,
      req.userId,
      limit + 1,
      cursor,
      RESULTS_LIMITS.messagePreviewMax,
      query.data.active,
    );
    const more = found.length > limit;
    if (more) found.length = limit;
    return {
      jobs: found.map((j) => ({
        jobId: j.id,
        status: j.status,
        createdAt: j.createdAt.toISOString(),
        startedAt: j.startedAt?.toISOString() ?? null,
        finishedAt: j.finishedAt?.toISOString() ?? null,
        // Skipped (opted out, not on WhatsApp) is an outcome of its own, counted only when some were.
        progress: { total: j.total, sent: j.sent, failed: j.failed, ...(j.skipped > 0 ? { skipped: j.skipped } : {}) },
        receipts: { delivered: j.delivered, read: j.read, replied: j.replied },
        messagePreview: j.preview,
        message: j.message,
        personalised: j.personalised,
        ...(j.attachment ? { attachment: j.attachment } : {}),
        detailsPurgedAfterDays: j.detailsPurgedAfterDays,
      })),
      nextCursor: more ? found.at(-1)!.id : null,
    };
  }

  /**
   * Checks the request and answers the file's name and type; the file itself then goes to the
   * gateway's inbox in chunks (see `stream`), after this answer.
   */
  async beginExport(req: RequestOf<'jobs.export'>): Promise<{ start: JobExportStart; run: () => Promise<void> }> {
    const query = jobExportQuerySchema.safeParse({ format: req.format, tz: req.tz });
    if (!query.success) throw AppError.validation(JobResultsErrorCode.InvalidQuery, firstIssue(query.error));
    if (typeof req.inbox !== 'string' || !req.inbox.startsWith('_INBOX.')) {
      throw AppError.validation(JobResultsErrorCode.InvalidQuery, 'inbox must be a NATS inbox');
    }
    const job = await this.ownedJob(req.userId, req.jobId);
    const { format, tz } = query.data;
    return {
      start: {
        filename: exportFileName(job.createdAt, job.preview, tz, format),
        contentType: EXPORT_CONTENT_TYPES[format],
      },
      run: () => this.stream(req.jobId, format, tz, req.inbox),
    };
  }

  /**
   * Streams the whole report: rows read by keyset pages of RESULTS_LIMITS.exportBatchRows, encoded,
   * and sent in chunks the gateway acknowledges one by one, so memory stays flat whatever the size.
   */
  private async stream(jobId: string, format: ExportFormat, tz: string, inbox: string): Promise<void> {
    const sink = new ChunkSink(this.nc, inbox);
    try {
      // Every name a start may carry (older jobs may have more: the first in name order).
      const variables = await this.results.variableNames(this.tx.manager, jobId, LIMITS.variablesPerJobMax);
      const attachment = (await this.results.attachmentName(this.tx.manager, jobId)) ?? undefined;
      const writer: ReportWriter =
        format === 'csv' ? csvWriter(variables, tz, attachment) : xlsxWriter(variables, tz, attachment);
      await sink.write(writer.start());
      let after = 0;
      for (;;) {
        const batch = await this.results.page(this.tx.manager, jobId, after, RESULTS_LIMITS.exportBatchRows);
        if (batch.length === 0) break;
        await sink.write(writer.rows(batch.map(toResult)));
        if (sink.stopped) return;
        after = batch.at(-1)!.seq;
      }
      await sink.write(writer.end());
      await sink.end();
    } catch (err) {
      if (sink.stopped) return;
      this.logger.warn({ err }, 'export stopped');
      await sink.fail(RESULTS_MESSAGES.exportFailed).catch(() => undefined);
    }
  }

  private async ownedJob(userId: string, jobId: string) {
    if (!isUuid(jobId)) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    const job = await this.results.findJob(this.tx.manager, userId, jobId);
    if (!job) throw AppError.notFound(JobsErrorCode.NotFound, JOB_MESSAGES.jobNotFound);
    return job;
  }
}

function parseSeqCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  // A list position, or one of the skipped recipients' positions after it (a Postgres int either way).
  if (!/^\d{1,10}$/.test(cursor) || Number(cursor) > 2_147_483_647)
    throw AppError.validation(JobResultsErrorCode.InvalidQuery, RESULTS_MESSAGES.invalidCursor);
  return Number(cursor);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toResult(r: ReportRow): RecipientResult {
  return {
    phoneNumber: r.phone,
    ...(r.variables ? { variables: r.variables } : {}),
    status: r.status,
    ...(r.status === 'failed' || r.status === 'skipped'
      ? { error: r.error ?? JOB_MESSAGES.sendFailed, failedAt: iso(r.doneAt) }
      : {}),
    sentAt: r.status === 'failed' || r.status === 'skipped' || r.status === 'pending' ? null : iso(r.doneAt),
    deliveredAt: iso(r.deliveredAt),
    readAt: iso(r.readAt),
    repliedAt: iso(r.repliedAt),
    ...(r.replies && r.replies.length > 0 ? { replies: r.replies } : {}),
  };
}

/**
 * Bytes to the gateway's inbox in chunks of RESULTS_LIMITS.exportChunkBytes. Each chunk is a request:
 * the next leaves only when the gateway has written the previous one out (back-pressure end to end).
 */
class ChunkSink {
  private pending: Uint8Array[] = [];
  private size = 0;
  stopped = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly inbox: string,
  ) {}

  async write(parts: Uint8Array[]): Promise<void> {
    for (const p of parts) {
      if (p.byteLength === 0) continue;
      this.pending.push(p);
      this.size += p.byteLength;
      while (this.size >= RESULTS_LIMITS.exportChunkBytes && !this.stopped)
        await this.flush(RESULTS_LIMITS.exportChunkBytes);
    }
  }

  async end(): Promise<void> {
    while (this.size > 0 && !this.stopped) await this.flush(RESULTS_LIMITS.exportChunkBytes);
    if (this.stopped) return;
    const h = headers();
    h.set(EXPORT_STREAM_HEADERS.end, '1');
    await this.nc.request(this.inbox, new Uint8Array(0), { timeout: RESULTS_LIMITS.exportAckTimeoutMs, headers: h });
  }

  async fail(reason: string): Promise<void> {
    const h = headers();
    h.set(EXPORT_STREAM_HEADERS.error, reason);
    this.nc.publish(this.inbox, new Uint8Array(0), { headers: h });
    await this.nc.flush();
  }

  private async flush(max: number): Promise<void> {
    const all = Buffer.concat(this.pending);
    const chunk = all.subarray(0, max);
    const rest = all.subarray(max);
    this.pending = rest.byteLength > 0 ? [rest] : [];
    this.size = rest.byteLength;
    const ack = await this.nc.request(this.inbox, chunk, { timeout: RESULTS_LIMITS.exportAckTimeoutMs });
    if (ack.string() === EXPORT_ACK.stop) this.stopped = true;
  }
}
