import { z } from '../common/schema.js';
import { RESULTS_LIMITS } from './results-limits.js';
import type {
  JobExportRequestSchema,
  JobHistoryRequestSchema,
  JobProgress,
  JobResultsRequestSchema,
} from './schemas.js';
import type { JobStatus } from './types.js';

/** Declared in results-limits.ts, so the schemas read them without importing this file. */
export { RESULTS_LIMITS };

/**
 * Campaign results: idempotent starts, per-user caps, staged large starts, the per-recipient
 * report, its CSV/XLSX export and the campaign history. Wire names, limits and texts live here once;
 * the gateway, the jobs service and the web import them.
 */

/** Header of `POST /start-bulk-messages`: a retry with the same key and body is the same job. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** JetStream object store bucket of staged start bodies. */
export const STAGED_STARTS_BUCKET = 'job-starts';

/** Headers of the export chunks the jobs service sends to the gateway's inbox. */
export const EXPORT_STREAM_HEADERS = {
  /** The last message of an export: no data, the file is complete. */
  end: 'Bns-Export-End',
  /** The export failed after it began (the HTTP answer is cut short); value: a short reason. */
  error: 'Bns-Export-Error',
} as const;
/** What the gateway answers to a chunk: `stop` when the HTTP client went away. */
export const EXPORT_ACK = { ok: 'ok', stop: 'stop' } as const;

/** Status of one recipient in the report: how far its message got. */
export const RECIPIENT_RESULT_STATUSES = [
  'pending',
  'sent',
  'delivered',
  'read',
  'replied',
  'failed',
  'skipped',
] as const;
export type RecipientResultStatus = (typeof RECIPIENT_RESULT_STATUSES)[number];
/** Every status in which the message reached WhatsApp: the web's "Successful" list. */
export const SUCCESSFUL_RESULT_STATUSES = [
  'sent',
  'delivered',
  'read',
  'replied',
] as const satisfies readonly RecipientResultStatus[];
/** Statuses counted as work in flight for the per-user caps (`scheduled`/`paused` come with the sending policy). */
export const CAPPED_JOB_STATUSES = ['queued', 'scheduled', 'running', 'paused'] as const;

export const EXPORT_FORMATS = ['csv', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};
/** Columns of the export, in order; variables follow as `var:<name>` columns (at most LIMITS.variablesPerJobMax, in name order). */
export const EXPORT_COLUMNS = [
  'phoneNumber',
  'status',
  'error',
  'sentAt',
  'failedAt',
  'deliveredAt',
  'readAt',
  'repliedAt',
] as const;

export enum JobResultsErrorCode {
  IdempotencyKeyInvalid = 'JOB_IDEMPOTENCY_KEY_INVALID',
  /** The key was used for a different request body (409). */
  IdempotencyKeyReused = 'JOB_IDEMPOTENCY_KEY_REUSED',
  TooManyActiveJobs = 'JOB_TOO_MANY_ACTIVE',
  TooManyQueuedRecipients = 'JOB_TOO_MANY_QUEUED_RECIPIENTS',
  InvalidQuery = 'JOB_RESULTS_QUERY_INVALID',
  /** The staged start body is gone (expired, or never stored). */
  StagedBodyMissing = 'JOB_STAGED_BODY_MISSING',
}

export const RESULTS_MESSAGES = {
  idempotencyKeyInvalid: `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${RESULTS_LIMITS.idempotencyKeyMaxLength} printable characters`,
  idempotencyKeyReused: `This ${IDEMPOTENCY_KEY_HEADER} was already used for a different request; use a new key for a new send`,
  tooManyActiveJobs: (max: number) =>
    `You already have ${max} active ${max === 1 ? 'job' : 'jobs'} (queued, scheduled, running or paused). Wait for one to finish or cancel one, then start again`,
  tooManyQueuedRecipients: (max: number, queued: number) =>
    `At most ${max.toLocaleString('en-US')} recipients can wait to be sent at once; ${queued.toLocaleString('en-US')} already wait. Wait for a job to finish or cancel one, then start again`,
  invalidStatus: `status must be one or more of ${RECIPIENT_RESULT_STATUSES.join(', ')}, comma-separated`,
  invalidCursor: 'cursor is not one this list gave out',
  invalidLimit: (max: number) => `limit must be a whole number from 1 to ${max}`,
  invalidActive: 'active must be true or false',
  invalidFormat: `format must be ${EXPORT_FORMATS.join(' or ')}`,
  stagedBodyMissing: 'The request body could not be read back; please send it again',
  exportFailed: 'the export stopped before it was complete',
  // Web
  campaignsTitle: 'Campaigns',
  noCampaigns: 'No campaigns yet: the jobs you start appear here.',
  campaignLoaded: 'Campaign loaded into the sender: review it and press Start Sending',
  exportDownloadFailed: 'Could not download the report',
  reportLoadFailed: 'Could not load the report',
} as const;

// ---- query schemas (gateway validates, the jobs service validates again) ----

// A query value arrives as a string, or as a list when the name is repeated (`?limit=1&limit=2`): a
// list gets the field's own message, like any other wrong value, never the parser's.
const intInRange = (max: number, fallback: number) =>
  z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
      if (!Number.isInteger(n) || n < 1 || n > max) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidLimit(max) });
        return z.NEVER;
      }
      return n;
    });

const cursorSchema = z
  .unknown()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string' || v.length > 200 || !/^[A-Za-z0-9_-]*$/.test(v)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidCursor });
      return z.NEVER;
    }
    return v;
  });

/** `status=` of the report: one status or several, comma-separated; absent = every recipient. */
const statusFilterSchema = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const parts = (Array.isArray(v) ? v.join(',') : v)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (parts.length === 0 || !parts.every((s) => (RECIPIENT_RESULT_STATUSES as readonly string[]).includes(s))) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidStatus });
      return z.NEVER;
    }
    return [...new Set(parts)] as RecipientResultStatus[];
  });

/** Query of `GET /job-results/{jobId}`. */
export const jobResultsQuerySchema = z.object({
  status: statusFilterSchema,
  cursor: cursorSchema,
  limit: intInRange(RESULTS_LIMITS.reportPageMax, RESULTS_LIMITS.reportPageDefault),
});
export type JobResultsQuery = z.output<typeof jobResultsQuerySchema>;

/** Query of `GET /job-results/{jobId}/export`. */
export const jobExportQuerySchema = z.object({
  format: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      const f = v === undefined ? 'csv' : typeof v === 'string' ? v.trim().toLowerCase() : '';
      if (!(EXPORT_FORMATS as readonly string[]).includes(f)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidFormat });
        return z.NEVER;
      }
      return f as ExportFormat;
    }),
});
export type JobExportQuery = z.output<typeof jobExportQuerySchema>;

/** Query of `GET /api/jobs/{userId}`: `active=true` lists only the jobs not finished yet (queued, scheduled, running, paused). */
export const jobHistoryQuerySchema = z.object({
  cursor: cursorSchema,
  limit: intInRange(RESULTS_LIMITS.historyPageMax, RESULTS_LIMITS.historyPageDefault),
  active: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '' || v === false || v === 'false') return false;
      if (v === true || v === 'true') return true;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidActive });
      return z.NEVER;
    }),
});
export type JobHistoryQuery = z.output<typeof jobHistoryQuerySchema>;

/** The `Idempotency-Key` header: absent is fine; present must be sane. */
export const idempotencyKeySchema = z
  .string()
  .min(1, RESULTS_MESSAGES.idempotencyKeyInvalid)
  .max(RESULTS_LIMITS.idempotencyKeyMaxLength, RESULTS_MESSAGES.idempotencyKeyInvalid)
  .regex(/^[\x21-\x7e]+$/, RESULTS_MESSAGES.idempotencyKeyInvalid);

// ---- answers ----

/** One recipient of `GET /job-results/{jobId}`. Times are ISO strings or null. */
export interface RecipientResult {
  phoneNumber: string;
  /** The row's variables of a personalised job. */
  variables?: Record<string, string>;
  status: RecipientResultStatus;
  error?: string;
  sentAt: string | null;
  /** When the message finally failed (failed entries only). */
  failedAt?: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  repliedAt: string | null;
}

export interface JobResultsPage {
  results: RecipientResult[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface JobReceipts {
  delivered: number;
  read: number;
  replied: number;
}

/** One job of `GET /api/jobs/{userId}`. */
export interface JobHistoryItem {
  jobId: string;
  status: JobStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  progress: JobProgress;
  receipts: JobReceipts;
  messagePreview: string;
  /** The whole message, for "Send again". */
  message: string;
  /** True when the job was personalised (recipients with variables). */
  personalised: boolean;
}

export interface JobHistoryPage {
  jobs: JobHistoryItem[];
  nextCursor: string | null;
}

/** Where a staged start body is (JetStream object store). */
export interface StagedBodyRef {
  bucket: string;
  name: string;
}

export interface JobExportStart {
  filename: string;
  contentType: string;
}

export type JobResultsRequest = z.output<typeof JobResultsRequestSchema>;
export type JobHistoryRequest = z.output<typeof JobHistoryRequestSchema>;
export type JobExportRequest = z.output<typeof JobExportRequestSchema>;

export interface JobResultsRequests {
  'jobs.results': { request: JobResultsRequest; reply: JobResultsPage };
  'jobs.list': { request: JobHistoryRequest; reply: JobHistoryPage };
  /**
   * Checks the job is the caller's, answers the file's name and type, then sends the file in chunks as
   * NATS requests to `inbox` (each acknowledged with EXPORT_ACK), ending with the EXPORT_STREAM_HEADERS.end header.
   */
  'jobs.export': { request: JobExportRequest; reply: JobExportStart };
}

// What a start carries beyond the spec's body for campaign results, `idempotencyKey` and `staged`, is declared
// in `StartJobRequestSchema`.
declare module './rpc.js' {
  interface StartJobReply {
    /** True when this answer replays an earlier start with the same key. */
    replayed?: boolean;
  }
  interface JobsRequests extends JobResultsRequests {}
}
