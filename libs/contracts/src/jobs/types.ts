/** `scheduled`: waits for its `startAt`; `paused`: waits for the user or its sending policy (`pausedReason`). */
export const JOB_STATUSES = ['queued', 'scheduled', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Why a job did not send to a recipient. */
export const SKIP_REASONS = ['opted_out', 'not_on_whatsapp'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Why a number is on a user's opt-out list. */
export const OPT_OUT_REASONS = ['keyword', 'manual'] as const;
export type OptOutReason = (typeof OPT_OUT_REASONS)[number];

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
/**
 * Columns of the export, in order, headed in words; variables follow as `var:<name>` columns (at most
 * LIMITS.variablesPerJobMax, in name order). Status is in words ("Opted out"), its code in the next column.
 */
export const EXPORT_COLUMNS = [
  'Phone number',
  'Status',
  'Status code',
  'Reason',
  'Sent at',
  'Failed at',
  'Delivered at',
  'Read at',
  'Replied at',
  'Replies',
] as const;

/** The export's column after EXPORT_COLUMNS when the job carried an attachment: its file name on every row. */
export const EXPORT_ATTACHMENT_COLUMN = 'Attachment';

/** A recipient's status in words, as the report and the export say it. */
export const RESULT_STATUS_WORDS: Record<RecipientResultStatus, string> = {
  pending: 'Pending',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  replied: 'Replied',
  failed: 'Failed',
  skipped: 'Skipped',
};

/** Why a recipient was skipped, as the status in words says it. */
export const SKIP_REASON_WORDS: Record<SkipReason, string> = {
  opted_out: 'Opted out',
  not_on_whatsapp: 'Not on WhatsApp',
};

/** One number of a user's opt-out list. */
export interface OptOutEntry {
  phoneNumber: string;
  reason: OptOutReason;
  at: string;
}

/** A recipient a job did not send to, and why. */
export interface SkippedEntry {
  phoneNumber: string;
  reason: SkipReason;
  timestamp: string;
}

/** A message a recipient wrote back, as the report shows it. Personal data: never logged. */
export interface RecipientReply {
  text: string;
  at: string;
}

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
  /** What the recipient wrote back, oldest first (the newest RESULTS_LIMITS.repliesPerRecipientMax); absent when nothing. */
  replies?: RecipientReply[];
}

export interface JobReceipts {
  delivered: number;
  read: number;
  replied: number;
}
