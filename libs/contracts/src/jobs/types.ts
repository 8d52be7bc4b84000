/** `scheduled`: waits for its `startAt`; `paused`: waits for the user or its sending policy (`pausedReason`). */
export const JOB_STATUSES = ['queued', 'scheduled', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Why a job did not send to a recipient. */
export const SKIP_REASONS = ['opted_out', 'not_on_whatsapp'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];
