/** Business constants and limits of SPEC.md §9, each defined once. */
export const LIMITS = {
  messageMaxLength: 1000,
  templateNameMax: 100,
  templateDescriptionMax: 500,
  templateMessageMax: 1000,
  templatePhoneNumbersMax: 200,
  templatePhoneMinDigits: 8,
  templatePhoneMaxDigits: 15,
  /**
   * Templates one user may keep (not in the spec). The list answers them all in one NATS message, so
   * this many templates at every field limit must fit well under 1 MiB even in their costliest JSON:
   * control characters escape to 6 bytes each (`\u0001`), CJK takes 3. Worst case about 13.5 KB a
   * template, 50 of them about 0.65 MiB (a test in limits.spec.ts computes it); 100 would not fit.
   */
  templatesPerUserMax: 50,
  /** Send screen numbers are Hong Kong numbers: exactly 8 digits. */
  hkPhoneDigits: 8,
  hkCountryCode: '852',
  /** The Add Phone Numbers instructions text. */
  instructionsMaxContactsPerBatch: 100,
  instructionsIntervalSeconds: 2,
  spreadsheetInitialRows: 10,
  qrMaxAttempts: 5,
  /** Linking by phone number: WhatsApp's code is 8 characters (shown as ABCD-EFGH)... */
  pairingCodeLength: 8,
  /** ...refreshed every 3 minutes, as WhatsApp Web does (PAIRING_CODE_REFRESH_MS changes it)... */
  pairingCodeRefreshMs: 180_000,
  /** ...and after this many codes nobody entered, the link ends as the QR's does after its attempts. */
  pairingCodeMaxCodes: 5,
  sessionCheckTimeoutMs: 30_000,
  connectTimeoutMs: 30_000,
  keepAliveLogMs: 600_000,
  activityLogMax: 100,
  dashboardRecentMessages: 10,
  dashboardRecentMessagesMax: 100,
  dashboardContentPreview: 100,
  /** A reply is shown (and kept on the message it answers) as its first 200 characters. */
  replyPreviewMax: 200,
  confirmRecipientsShown: 10,
  reviewRecipientsShown: 5,
  templateCardNumbersShown: 3,
  templateFetchDebounceMs: 300,
  toastMs: 3000,
  defaultSendDelayMs: 4000,
  /** The review box's own estimate uses 2 s per message (SPEC §9 gives both). */
  reviewEstimateSecondsPerMessage: 2,
  defaultMaxRecipientsPerJob: 50_000,
  /**
   * Personalisation variables (not in the spec): distinct names one job's recipients may carry in all
   * (the export's `var:` columns), and a name's length. A value is at most `messageMaxLength` characters,
   * the most a message could show of it. Together they bound a recipient's stored row and so a page of
   * the report.
   */
  variablesPerJobMax: 50,
  variableNameMaxLength: 64,
  /** Request plumbing (not in the spec): bounds every request so none can crash or stall a service. */
  /** Nesting of arrays/objects a JSON body may have; deeper is refused at parse time (no payload needs more than 5). */
  jsonMaxDepth: 64,
  /** A socket.io id is 20 characters; anything much longer is not one. */
  clientIdMaxLength: 128,
  /** Clerk user ids are about 32 characters. */
  userIdMaxLength: 256,
  /** Ids a NATS request names (a job, a template, a cursor, an inbox): ours are UUIDs or shorter. */
  rpcIdMaxLength: 256,
  /** Dev sign-in: an e-mail address (RFC 5321's path limit) and the optional first name. */
  emailMaxLength: 254,
  firstNameMaxLength: 100,
  /** NATS's default max_payload (1 MiB): a request must fit in one message. */
  natsMaxPayloadBytes: 1_048_576,
  /**
   * A request carries its caller's deadline (its timeout from when it was made); a service that gets
   * it later than this past the deadline (it was stopped, NATS held it, Postgres stalled it) does not
   * act on it: the caller has answered 503 already. The margin covers clocks of two hosts.
   */
  rpcDeadlineGraceMs: 1000,
  /** Room kept in a NATS message for the request envelope (pattern, id, userId, headers). */
  natsEnvelopeBytes: 16_384,
} as const;

export const TEMPLATE_CATEGORIES = ['general', 'marketing', 'personal', 'business', 'custom'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** Marketing figures of the landing page (SPEC §1, §9). */
export const MARKETING = {
  deliveryRate: '99.9%',
  messageCapacity: '50K+',
  userCapacity: '1000+',
  demoLength: '3-minute walkthrough',
  steps: 3,
  copyrightYear: 2025,
} as const;

/** Estimated minutes of a job: ceil(delay × (n − 1) / 60 s) (SPEC §9, "the actual estimate"). */
export function estimateMinutes(recipients: number, delayMs: number = LIMITS.defaultSendDelayMs): number {
  if (recipients <= 1) return 0;
  return Math.ceil((delayMs * (recipients - 1)) / 60_000);
}

/**
 * The review box's estimate: ceil(2n / 60) (SPEC §9); `extraSeconds` are added before rounding (an
 * attachment's one upload).
 */
export function reviewEstimateMinutes(recipients: number, extraSeconds = 0): number {
  return Math.ceil((LIMITS.reviewEstimateSecondsPerMessage * recipients + extraSeconds) / 60);
}

/**
 * Job polling interval (SPEC §9): 1 s for the first 30 polls, 2 s up to poll 90, 8 s up to poll 200,
 * then 10 s; 15 s after 2 consecutive empty log polls.
 */
export function pollIntervalMs(pollCount: number, consecutiveEmptyLogPolls = 0): number {
  if (consecutiveEmptyLogPolls >= 2) return 15_000;
  if (pollCount < 30) return 1000;
  if (pollCount < 90) return 2000;
  if (pollCount < 200) return 8000;
  return 10_000;
}
