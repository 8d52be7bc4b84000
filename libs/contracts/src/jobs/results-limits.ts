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
} as const;
