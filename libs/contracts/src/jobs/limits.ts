import { LIMITS } from '../common/limits.js';
import { ONE_NATS_MESSAGE, type HttpCallRule } from '../common/schema.js';

/**
 * Limits of the jobs module: sizes, page lengths and times of campaign results, opt-outs and the
 * job-status revalidation. The schemas, the texts, the jobs service, the gateway and the web read them here.
 */

/** Sizes and times of campaign results: idempotency keys, report and history pages, staged starts, exports. */
export const RESULTS_LIMITS = {
  /** Printable ASCII, like Stripe's keys; a UUID fits easily. */
  idempotencyKeyMaxLength: 200,
  reportPageDefault: 100,
  reportPageMax: 500,
  /**
   * A report page also ends at this many bytes of JSON (always at least one row), half of NATS's
   * 1 MiB max_payload (LIMITS.natsMaxPayloadBytes): rows of jobs stored before the variables' size rules
   * can be large, and an answer over max_payload is never delivered.
   */
  pageBytesMax: 512 * 1024,
  historyPageDefault: 20,
  historyPageMax: 50,
  /** History items show the message cut to this many characters. */
  messagePreviewMax: 100,
  defaultMaxActiveJobs: 5,
  defaultMaxQueuedRecipients: 200_000,
  /**
   * A start body bigger than this does not travel in the `jobs.start` request: the gateway stages it
   * in the JetStream object store (chunked) and the request carries only its name. Well under the
   * 1 MB NATS payload.
   */
  stageAboveBytes: 256 * 1024,
  /**
   * A start whose recipient lists hold more entries than this is checked by the jobs service alone
   * (the same schema and words; it checks every start), so a 50,000-row list is walked once, not twice.
   * Smaller starts are also checked by the gateway, where a refusal costs no trip.
   */
  gatewayCheckMaxEntries: 1000,
  /**
   * How long the gateway waits for `jobs.start` (a 50,000-row start is stored in one transaction);
   * the jobs service drops a start that waited in its queue longer than this, since nobody waits for it.
   */
  startTimeoutMs: 30_000,
  /** Staged bodies the jobs service did not collect (it crashed) expire after this long. */
  stagedTtlMs: 3600_000,
  /** Bytes of one export chunk on NATS; each is acknowledged by the gateway before the next (back-pressure). */
  exportChunkBytes: 128 * 1024,
  /** The gateway must acknowledge an export chunk within this long, or the export stops. */
  exportAckTimeoutMs: 30_000,
  /** Rows read from Postgres per step of an export (keyset paging: flat memory whatever the job size). */
  exportBatchRows: 2000,
  /** A reply's text is kept up to this many characters (NUL bytes stripped); the rest is cut. */
  replyTextMax: 2000,
  /** A recipient's newest replies the report and the export carry (all are kept). */
  repliesPerRecipientMax: 20,
  /** `q=` of the report: digits of a number (spaces, `+`, `-` and brackets dropped), 8 or with the 852 prefix. */
  searchMaxDigits: 15,
} as const;

export const OPT_OUT_LIMITS = {
  keywordsMax: 20,
  keywordMaxLength: 30,
  confirmationTextMax: 300,
  listPageDefault: 50,
  listPageMax: 200,
  /** Numbers one add (or import) call takes. */
  addMax: 1000,
  /** Numbers one check call (the review step) takes: as many as a job. */
  checkMax: LIMITS.defaultMaxRecipientsPerJob,
  searchMaxLength: 15,
  /** Export pages the gateway asks for while it streams the CSV. */
  exportPage: 5000,
  /** Days a number WhatsApp said it does not know is skipped without asking again (default of the env var). */
  notOnWhatsAppDays: 30,
} as const;

/** Size rules of the opt-out calls with a body (the gateway answers 413 above them). */
export const OPT_OUT_HTTP = {
  /** Up to `addMax` numbers, as typed or imported. */
  add: ONE_NATS_MESSAGE,
  /** As many numbers as a job. */
  check: ONE_NATS_MESSAGE,
  /** Three small fields: 20 keywords and a short text fit many times over. */
  settings: { maxBodyBytes: 16 * 1024 },
} as const satisfies Record<string, HttpCallRule>;

/** Revalidation of `GET /job-status/{jobId}` (the ETag and `If-None-Match`). */
export const JOB_STATUS_REVALIDATION = {
  /** A longer If-None-Match is ignored (answered as if absent): browsers send one tag of ~27 characters. */
  ifNoneMatchMaxLength: 1024,
  /** Versions forwarded to the jobs service from one header. */
  maxVersions: 8,
} as const;

/** A job-status version: 128 bits of a digest, base64url. */
export const JOB_STATUS_VERSION_PATTERN = /^[A-Za-z0-9_-]{22}$/;
