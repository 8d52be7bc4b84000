import type { OptOutEntry } from './types.js';

/**
 * Wire names of the jobs module: NATS subjects and buckets, HTTP and NATS headers, the keys and
 * line formats that travel between processes. Declared here once; the jobs service, the gateway and
 * the web import them.
 */

/**
 * Published on core NATS (not stored: the opt-out itself is, in Postgres) by the jobs replica that put
 * numbers on a user's list, once that committed. Every jobs replica hears it and withholds a send to
 * those numbers that it prepared ahead of its slot (JOBS_SEND_LEAD_MS); the next step's take then
 * passes over them and counts them skipped. Outside `events.>`, so it never reaches a browser.
 */
export const OPTED_OUT_SUBJECT = 'internal.jobs.opted-out';

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

/** `GET /job-status/{jobId}`'s Cache-Control: a browser may keep a copy, and revalidates it on every use. */
export const JOB_STATUS_CACHE_CONTROL = 'private, no-cache';

/** The ETag of an answer with this version. */
export function jobStatusEtag(version: string): string {
  return `W/"${version}"`;
}

/** CSV of the export: a header, then one line per number (the values never hold a comma or quote). */
export const OPT_OUT_CSV_HEADER = 'phoneNumber,reason,at';
export function optOutCsvLine(e: OptOutEntry): string {
  return `${e.phoneNumber},${e.reason},${e.at}`;
}

/**
 * Idempotency key of the confirmation reply to one STOP: the `<jobId>:<recipient>` form of job sends,
 * so the sessions ledger parses it like theirs, with the inbound event in place of a job.
 */
export function optOutConfirmationKey(eventId: string, phone: string): string {
  return `opt-out-${eventId}:${phone}`;
}
