import type { z } from '../common/schema.js';
import type { FailedEntrySchema, JobLogEntrySchema, JobProgressSchema, JobRecipientSchema, JobViewSchema, StartJobBodySchema, SuccessEntrySchema } from './schemas.js';

/** `scheduled`: waits for its `startAt`; `paused`: waits for the user or its sending policy (`pausedReason`). */
export const JOB_STATUSES = ['queued', 'scheduled', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export type JobProgress = z.output<typeof JobProgressSchema>;

/** One personalised recipient: `{{name}}` in the message is filled from `variables.name`. */
export type JobRecipientInput = z.input<typeof JobRecipientSchema>;

/** `POST /start-bulk-messages` body (SPEC §7), plus `recipients` for personalised sends. */
export type StartJobBody = z.input<typeof StartJobBodySchema>;

export type SuccessEntry = z.output<typeof SuccessEntrySchema>;
export type FailedEntry = z.output<typeof FailedEntrySchema>;

/** The `job` of `GET /job-status/{jobId}` (SPEC §3 Bulk job). */
export type JobView = z.output<typeof JobViewSchema>;

/** SPEC §3 Job log entry. */
export type JobLogEntry = z.output<typeof JobLogEntrySchema>;
