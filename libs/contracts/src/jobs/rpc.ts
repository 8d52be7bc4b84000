import type { PingRequest } from '../common/rpc.js';
import type { z } from '../common/schema.js';
import type { JobPolicyRequests } from './policy.js';
import type { JobLogsRequestSchema, JobRefSchema, JobsUserRequestSchema, StartJobRequestSchema } from './schemas.js';
import type { JobLogEntry, JobView } from './types.js';
import type { JobStatusReply, JobStatusRequest } from './job-status.js';

/** `jobs.start`: the body of `POST /start-bulk-messages` with the acting user (schema: `StartJobRequestSchema`). */
export type StartJobRequest = z.output<typeof StartJobRequestSchema>;
export interface StartJobReply {
  jobId: string;
  /** Minutes: ceil(delay × (n − 1) / 60 s) with the configured delay (SPEC §9). */
  estimatedTime: number;
  status: 'queued' | 'running' | 'scheduled';
  total: number;
  estimatedFinishAt: string;
}

export type JobRef = z.output<typeof JobRefSchema>;
export type JobLogsRequest = z.output<typeof JobLogsRequestSchema>;
/** A request that names only the acting user. */
export type JobsUserRequest = z.output<typeof JobsUserRequestSchema>;

/** `jobs.pacing`: the delays the jobs service sends with, so estimates shown before a start match its own. */
export interface JobPacingReply {
  sendDelayMs: number;
  sendJitterMs: number;
}

/**
 * `jobs.idScheme`: how job ids are made (service-kit `JobIdScheme`), so the gateway answers "not found"
 * for an id that names no job without asking. Asked by services, never on a user's behalf.
 */
export interface JobIdSchemeReply {
  /** The MAC key of job ids, base64. */
  key: string;
  /** Whether jobs made before the scheme (ids of another form) may exist. */
  legacyIds: boolean;
}

export interface JobsRequests extends JobPolicyRequests {
  'jobs.idScheme': { request: PingRequest; reply: JobIdSchemeReply };
  'jobs.pacing': { request: JobsUserRequest; reply: JobPacingReply };
  'jobs.start': { request: StartJobRequest; reply: StartJobReply };
  /** With `ifNoneMatch`, an unchanged job is only `{ notModified, version }`: its lists never cross NATS. */
  'jobs.status': { request: JobStatusRequest; reply: JobStatusReply };
  /** Entries strictly after `since` (ISO or epoch ms), oldest first. */
  'jobs.logs': { request: JobLogsRequest; reply: { logs: JobLogEntry[] } };
  'jobs.cancel': { request: JobRef; reply: { job: JobView } };
}
