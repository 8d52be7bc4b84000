import type { JobLogType } from '../common/events.js';

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** A job still holds work: the worker picks it up (queued) or is sending it (running). */
export const ACTIVE_JOB_STATUSES = ['queued', 'running'] as const satisfies readonly JobStatus[];

export interface JobProgress {
  total: number;
  sent: number;
  failed: number;
}

/** One personalised recipient: `{{name}}` in the message is filled from `variables.name`. */
export interface JobRecipientInput {
  phone: string | number;
  variables?: Record<string, string | number | boolean | null>;
}

/** `POST /start-bulk-messages` body (SPEC §7), plus `recipients` for personalised sends. */
export interface StartJobBody {
  message: string;
  phoneNumbers?: (string | number)[];
  recipients?: JobRecipientInput[];
  clientId?: string;
  clerkUserId?: string;
}

export interface SuccessEntry {
  originalNumber: string;
  timestamp: string;
}
export interface FailedEntry {
  phoneNumber: string;
  timestamp: string;
  error: string;
}

/** The `job` of `GET /job-status/{jobId}` (SPEC §3 Bulk job). */
export interface JobView {
  jobId: string;
  status: JobStatus;
  progress: JobProgress;
  results: { successList: SuccessEntry[]; failedList: FailedEntry[] };
  error: string | null;
  /** Minutes, estimated at start from the configured delay. */
  estimatedTime: number;
  /** When the next message of this job is due (the web's countdown); null when none is scheduled. */
  nextSendAt: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** SPEC §3 Job log entry. */
export interface JobLogEntry {
  type: JobLogType;
  message: string;
  timestamp: string;
}
