import type { JobPolicyRequests } from './policy.js';
import type { JobLogEntry, JobRecipientInput, JobView } from './types.js';

/** `jobs.start`: the body of `POST /start-bulk-messages` with the acting user. */
export interface StartJobRequest {
  userId: string;
  message: unknown;
  phoneNumbers?: unknown;
  recipients?: JobRecipientInput[] | unknown;
  clientId?: unknown;
  /** See StartJobBody.startAt. */
  startAt?: unknown;
}
export interface StartJobReply {
  jobId: string;
  /** Minutes: ceil(delay × (n − 1) / 60 s) with the configured delay (SPEC §9). */
  estimatedTime: number;
  status: 'queued' | 'running' | 'scheduled';
  total: number;
  estimatedFinishAt: string;
}

export interface JobRef {
  userId: string;
  jobId: string;
}

/** `jobs.pacing`: the delays the jobs service sends with, so estimates shown before a start match its own. */
export interface JobPacingReply {
  sendDelayMs: number;
  sendJitterMs: number;
}

export interface JobsRequests extends JobPolicyRequests {
  'jobs.pacing': { request: { userId: string }; reply: JobPacingReply };
  'jobs.start': { request: StartJobRequest; reply: StartJobReply };
  'jobs.status': { request: JobRef; reply: { job: JobView } };
  /** Entries strictly after `since` (ISO or epoch ms), oldest first. */
  'jobs.logs': { request: JobRef & { since?: string }; reply: { logs: JobLogEntry[] } };
  'jobs.cancel': { request: JobRef; reply: { job: JobView } };
}
