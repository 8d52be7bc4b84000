import type { PingRequest } from '../common/rpc.js';
import type { z } from '../common/schema.js';
import type { SendingPolicy } from './policy.js';
import type {
  JobAttachment,
  JobExportRequestSchema,
  JobHistoryRequestSchema,
  JobLogEntry,
  JobLogsRequestSchema,
  JobProgress,
  JobRefSchema,
  JobResultsRequestSchema,
  JobStatusRequestSchema,
  JobsUserRequestSchema,
  JobView,
  OptOutExportRequestSchema,
  OptOutListRequestSchema,
  OptOutNumbersRequestSchema,
  OptOutRemoveRequestSchema,
  OptOutSettings,
  OptOutSettingsSetRequestSchema,
  PolicySetRequestSchema,
  StartJobRequestSchema,
} from './schemas.js';
import type { JobReceipts, JobStatus, OptOutEntry, RecipientResult } from './types.js';

/** `jobs.start`: the body of `POST /start-bulk-messages` with the acting user (schema: `StartJobRequestSchema`). */
export type StartJobRequest = z.output<typeof StartJobRequestSchema>;
export interface StartJobReply {
  jobId: string;
  /** Minutes: ceil(delay × (n − 1) / 60 s) with the configured delay (SPEC §9). */
  estimatedTime: number;
  status: 'queued' | 'running' | 'scheduled';
  total: number;
  estimatedFinishAt: string;
  /** True when this answer replays an earlier start with the same key. */
  replayed?: boolean;
}

export type JobRef = z.output<typeof JobRefSchema>;
export type JobStatusRequest = z.output<typeof JobStatusRequestSchema>;
/**
 * The whole job with its version, or only the version when the client's copy is current. The job is
 * its JSON text (a `JobView`), passed on by the gateway as it is: its lists are not parsed and written
 * again on the way.
 */
export type JobStatusReply = { jobJson: string; version: string } | { notModified: true; version: string };
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

export interface JobsRequests extends JobPolicyRequests, JobResultsRequests {
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
/** The account's sends today against today's daily cap (`jobs.sends.today`). */
export interface SendsToday {
  /** Today in the policy's time zone (YYYY-MM-DD): the day the cap counts. */
  date: string;
  timeZone: string;
  /** Messages sent today (what the daily cap counts). */
  sent: number;
  /** Today's cap (the policy's, lowered during warm-up); null = none. */
  cap: number | null;
  /** Sends left today under the cap; null when there is no cap. */
  remaining: number | null;
  /**
   * Messages to numbers that never replied: this calendar month and the last 30 days (in the policy's
   * time zone), and the policy's limit on the 30 days (null = none).
   */
  unanswered: { month: number; last30Days: number; limit: number | null };
}

export interface JobPolicyRequests {
  'jobs.policy.get': { request: JobsUserRequest; reply: { policy: SendingPolicy } };
  'jobs.sends.today': { request: JobsUserRequest; reply: SendsToday };
  /** `policy` is a partial update; refusals are validation errors naming the field. */
  'jobs.policy.set': { request: PolicySetRequest; reply: { policy: SendingPolicy } };
  /** Owner only; 409 (conflict) when the job is finished or already paused by the user. */
  'jobs.pause': { request: JobRef; reply: { job: JobView } };
  /** Owner only; 409 when the job is not paused by the user. */
  'jobs.resume': { request: JobRef; reply: { job: JobView } };
}

// ---- campaign results

export interface JobResultsPage {
  results: RecipientResult[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
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
  /** The file every message carried; absent for text only. */
  attachment?: JobAttachment;
  /**
   * The retention period (days) after which the purge removed the message text and the per-recipient
   * results (the counts stay); null while they are kept.
   */
  detailsPurgedAfterDays: number | null;
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

// ---- opt-outs (the gateway validates shapes; the jobs service checks again, it is the owner)

export interface OptOutListReply {
  optOuts: OptOutEntry[];
  nextCursor: string | null;
  /** How many numbers the whole list holds (not only those matching `q`). */
  total: number;
}

export interface OptOutCheckReply {
  /** Numbers on the list, in the order asked. */
  optedOut: string[];
  /** Numbers WhatsApp said it does not know, within the memory window. */
  notOnWhatsApp: string[];
}

export type OptOutListRequest = z.output<typeof OptOutListRequestSchema>;
export type OptOutNumbersRequest = z.output<typeof OptOutNumbersRequestSchema>;
export type OptOutRemoveRequest = z.output<typeof OptOutRemoveRequestSchema>;
export type OptOutExportRequest = z.output<typeof OptOutExportRequestSchema>;
export type OptOutSettingsSetRequest = z.output<typeof OptOutSettingsSetRequestSchema>;

export interface OptOutsRequests {
  'jobs.optouts.list': { request: OptOutListRequest; reply: OptOutListReply };
  'jobs.optouts.add': { request: OptOutNumbersRequest; reply: { added: number; alreadyListed: number } };
  'jobs.optouts.remove': { request: OptOutRemoveRequest; reply: { removed: true } };
  /** One page of the whole list, oldest first, for the gateway's streamed CSV. */
  'jobs.optouts.export': { request: OptOutExportRequest; reply: { optOuts: OptOutEntry[]; nextCursor: string | null } };
  'jobs.optouts.check': { request: OptOutNumbersRequest; reply: OptOutCheckReply };
  'jobs.optouts.settings.get': { request: JobsUserRequest; reply: OptOutSettings };
  'jobs.optouts.settings.set': { request: OptOutSettingsSetRequest; reply: OptOutSettings };
}
