import type { PingRequest } from '../common/rpc.js';
import type { z } from '../common/schema.js';
import type { SendingPolicy } from './policy.js';
import type {
  JobLogEntry,
  JobLogsRequestSchema,
  JobRefSchema,
  JobsUserRequestSchema,
  JobView,
  PolicySetRequestSchema,
  StartJobRequestSchema,
} from './schemas.js';
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

export type PolicySetRequest = z.output<typeof PolicySetRequestSchema>;

/** NATS requests of the policy and of pause/resume (`jobs.*`). */
export interface JobPolicyRequests {
  'jobs.policy.get': { request: JobsUserRequest; reply: { policy: SendingPolicy } };
  /** `policy` is a partial update; refusals are validation errors naming the field. */
  'jobs.policy.set': { request: PolicySetRequest; reply: { policy: SendingPolicy } };
  /** Owner only; 409 (conflict) when the job is finished or already paused by the user. */
  'jobs.pause': { request: JobRef; reply: { job: JobView } };
  /** Owner only; 409 when the job is not paused by the user. */
  'jobs.resume': { request: JobRef; reply: { job: JobView } };
}
