import { LIMITS } from '../common/limits.js';
import {
  checkWith,
  ClerkUserIdSchema,
  ClientIdSchema,
  firstIssue,
  hasLoneSurrogate,
  hasNul,
  isBlankText,
  REQUEST_MESSAGES,
  RpcIdSchema,
  RpcUserIdSchema,
  z,
  type HttpCallRule,
  type SchemaCheck,
} from '../common/schema.js';
import { JOB_LOG_TYPES, MessageReceivedEventSchema } from '../common/events.js';
import {
  EXPORT_FORMATS,
  JOB_STATUSES,
  RECIPIENT_RESULT_STATUSES,
  SKIP_REASONS,
  type ExportFormat,
  type RecipientResultStatus,
} from './types.js';
import {
  DEFAULT_OPT_OUT_CONFIRMATION,
  DEFAULT_OPT_OUT_KEYWORDS,
  JOB_MESSAGES,
  OPT_OUT_MESSAGES,
  RESULTS_MESSAGES,
} from './messages.js';
import { isTimeZone, PAUSED_REASONS, POLICY_MESSAGES } from './policy.js';
import { JOB_STATUS_REVALIDATION, JOB_STATUS_VERSION_PATTERN, OPT_OUT_LIMITS, RESULTS_LIMITS } from './limits.js';
import { MEDIA_KINDS } from '../media/limits.js';

/**
 * The bulk-job payloads (SPEC §3, §7), each declared once. The start body's schema holds the shape
 * rules in the order a user should hear about them (message, then the list, then the rest); the
 * rules that need the whole list (numbers, duplicates, placeholders, the account's maximum) are
 * `checkStartJob`'s, in the jobs service. Outgoing text refuses NUL and lone surrogates: silently
 * changing what is sent to a customer would be worse than saying so.
 */

const isBlank = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

const PhoneEntry = z.union([z.string(), z.number(), z.null()], { error: JOB_MESSAGES.phoneNumbersNotAList });

/** Text a message may carry: no NUL (Postgres cannot store it), no lone surrogate (it would go out as "�"). */
const textIssue = (field: string, text: string): string | undefined =>
  hasNul(text)
    ? REQUEST_MESSAGES.nulCharacter(field)
    : hasLoneSurrogate(text)
      ? REQUEST_MESSAGES.invalidText(field)
      : undefined;

const VariableValue = z.union(
  [
    z.string().superRefine((v, ctx) => {
      const issue = textIssue('variables', v);
      if (issue) ctx.addIssue({ code: 'custom', message: issue });
    }),
    z.number(),
    z.boolean(),
    z.null(),
  ],
  { error: JOB_MESSAGES.recipientsNotAList },
);
type VariableValue = z.output<typeof VariableValue>;

/** A value VariableValue takes as it is: text without NUL or lone surrogates, a finite number, a boolean, null. */
const isPlainVariableValue = (raw: unknown): raw is VariableValue =>
  raw === null ||
  typeof raw === 'boolean' ||
  (typeof raw === 'number' && Number.isFinite(raw)) ||
  (typeof raw === 'string' && textIssue('variables', raw) === undefined);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A recipient's variables, name → value, parsed into an object without a prototype: every name is a
 * plain key, `__proto__` and `constructor` included (zod's record drops `__proto__`, and a `{}` would
 * take it for its prototype). Names are checked as text like the values.
 */
const VariablesSchema = z
  .custom<Record<string, z.input<typeof VariableValue>>>(isPlainObject, { error: JOB_MESSAGES.recipientsNotAList })
  .transform((input, ctx) => {
    const out = Object.create(null) as Record<string, VariableValue>;
    for (const name in input) {
      if (!Object.hasOwn(input, name)) continue;
      const raw = input[name];
      const nameIssue = textIssue('variables', name);
      if (nameIssue) {
        // No path: it would echo the broken name.
        ctx.addIssue({ code: 'custom', message: nameIssue });
        continue;
      }
      // What VariableValue accepts, without a parse per value (a 50,000-row start has 200,000 of them);
      // anything else gets VariableValue's own refusal.
      if (isPlainVariableValue(raw)) {
        out[name] = raw;
        continue;
      }
      const value = VariableValue.safeParse(raw);
      if (value.success) out[name] = value.data;
      else ctx.addIssue({ code: 'custom', message: firstIssue(value.error), path: [name] });
    }
    return out;
  })
  .meta({
    type: 'object',
    additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }], nullable: true },
    example: { name: 'Ann' },
  });

/** One personalised recipient: `{{name}}` in the message is filled from `variables.name`. */
export const JobRecipientSchema = z.object(
  {
    phone: z.union([z.string(), z.number(), z.null()], { error: JOB_MESSAGES.recipientsNotAList }).optional(),
    variables: VariablesSchema.nullish(),
    /**
     * The row of the user's spreadsheet this recipient came from (1-based, as the spreadsheet shows it).
     * Refusals that name rows ("no value in row 5") use it; anything but a positive whole number is
     * ignored and the position in `recipients` is used.
     */
    row: z.unknown().optional().meta({ description: 'spreadsheet row (1-based) named in refusals', example: 2 }),
  },
  { error: JOB_MESSAGES.recipientsNotAList },
);

/**
 * The start body's fields, each declared once: their type, their refusals and their OpenAPI entry. Every
 * hop a start crosses (the web's form, the gateway, the staged body, the jobs service) takes the list of
 * fields from here, so a field added here reaches the jobs service without a hop naming it.
 */
const StartJobObjectSchema = z.object({
  message: z
    .string({ error: JOB_MESSAGES.enterMessageFirst })
    // Only invisible characters (zero-width spaces, joiners, U+FEFF…) show nothing: blank, too.
    .refine((v) => !isBlankText(v), { message: JOB_MESSAGES.enterMessageFirst, abort: true })
    .refine((v) => !hasNul(v), { message: REQUEST_MESSAGES.nulCharacter('message'), abort: true })
    .refine((v) => !hasLoneSurrogate(v), { message: REQUEST_MESSAGES.invalidText('message'), abort: true })
    .meta({ maxLength: LIMITS.messageMaxLength, example: 'Hi {{name}}' }),
  phoneNumbers: z
    .array(PhoneEntry, { error: JOB_MESSAGES.phoneNumbersNotAList })
    .nullish()
    .meta({ description: '8-digit Hong Kong numbers (852/+852 stripped, duplicates merged)', example: ['91234567'] }),
  recipients: z
    .array(JobRecipientSchema, { error: JOB_MESSAGES.recipientsNotAList })
    .nullish()
    .meta({
      description: 'Personalised recipients; {{placeholders}} are filled from variables',
      example: [{ phone: '91234567', variables: { name: 'Ann' } }],
    }),
  /** Checked by the jobs service: an attachment that is not the user's is 404 before anything else. */
  mediaId: z.unknown().optional().meta({
    type: 'string',
    description: 'An attachment uploaded with POST /api/media: sent with the message as its caption',
    example: 'med_3q2hYzX9c1Vb8uKq0aTn7w',
  }),
  clientId: ClientIdSchema.optional(),
  clerkUserId: ClerkUserIdSchema.optional(),
  /** Checked by the jobs service (`checkStartAt`): the only one that knows "now" for the job. */
  startAt: z.string({ error: POLICY_MESSAGES.startAtInvalid }).nullish().meta({
    description: 'ISO 8601, in the future, at most 30 days ahead: the job is `scheduled` until then',
    example: '2026-01-31T09:00:00+08:00',
  }),
});

/** The acting user named in a body is the gateway's to check against the token; it is not the job's. */
export type StartJobField = Exclude<keyof typeof StartJobObjectSchema.shape, 'clerkUserId'>;
/** The job's own fields of a start, in the body's order: what the gateway forwards and the jobs service reads. */
export const START_JOB_FIELDS = Object.keys(StartJobObjectSchema.shape).filter(
  (k): k is StartJobField => k !== 'clerkUserId',
);
/** The fields that can make a start too big for one NATS message: they travel in the staged body when it is staged. */
export const STAGED_START_FIELDS = [
  'message',
  'phoneNumbers',
  'recipients',
] as const satisfies readonly StartJobField[];
/** A start's fields as they travel between services, not yet checked (the jobs service checks them). */
export type StartJobFields = { [K in StartJobField]?: unknown };

/** The start fields present in `source` (a body, a request, a staged body read back), in the body's order. */
export function startFieldsOf(source: object): StartJobFields {
  const from = source as Record<string, unknown>;
  const out: StartJobFields = {};
  for (const k of START_JOB_FIELDS) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

/** `POST /start-bulk-messages` body (SPEC §7), plus `recipients` for personalised sends. */
export const StartJobBodySchema = StartJobObjectSchema.superRefine((body, ctx) => {
  if ((body.phoneNumbers ?? []).length > 0 && (body.recipients ?? []).length > 0) {
    // Which list is meant is anyone's guess: silently sending to one of them would be worse than asking.
    ctx.addIssue({ code: 'custom', path: ['recipients'], message: JOB_MESSAGES.phoneNumbersAndRecipients });
    return;
  }
  const rows =
    body.recipients && body.recipients.length > 0 ? body.recipients.map((r) => r.phone) : (body.phoneNumbers ?? []);
  if (!Array.isArray(rows) || rows.every(isBlank)) {
    ctx.addIssue({ code: 'custom', path: ['phoneNumbers'], message: JOB_MESSAGES.addPhoneNumbersFirst });
  } else if (typeof body.message === 'string' && body.message.length > LIMITS.messageMaxLength) {
    ctx.addIssue({ code: 'custom', path: ['message'], message: JOB_MESSAGES.messageTooLong });
  }
});

/** What the gateway parses: a body that is not an object is a form with nothing in it. */
export const StartJobHttpBodySchema = z.preprocess(
  (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {}),
  StartJobBodySchema,
);

type ParsedRecipient = z.output<typeof JobRecipientSchema>;

/**
 * `recipients` as `z.array(JobRecipientSchema)` parses them, without zod, when every entry is of the
 * plain kind a spreadsheet makes: an object whose phone is text, a number or null and whose variables
 * (if any) pass `VariablesSchema` as they are. Undefined as soon as one entry is anything else: then the
 * schema parses the list and says what is wrong in its own words. Zod took most of a 50,000-row
 * start's check (its first one in a process several times over).
 */
function plainRecipients(list: readonly unknown[]): ParsedRecipient[] | undefined {
  const out: ParsedRecipient[] = new Array<ParsedRecipient>(list.length);
  for (let i = 0; i < list.length; i++) {
    const entry = list[i];
    if (!isPlainObject(entry)) return undefined;
    const { phone, variables: raw } = entry;
    const parsed: ParsedRecipient = {};
    if (phone !== undefined) {
      if (!(phone === null || typeof phone === 'string' || (typeof phone === 'number' && Number.isFinite(phone))))
        return undefined;
      parsed.phone = phone;
    }
    if (raw === null) parsed.variables = null;
    else if (raw !== undefined) {
      if (!isPlainObject(raw)) return undefined;
      const variables = Object.create(null) as Record<string, VariableValue>;
      for (const name in raw) {
        if (!Object.hasOwn(raw, name)) continue;
        const value = raw[name];
        if (textIssue('variables', name) !== undefined || !isPlainVariableValue(value)) return undefined;
        variables[name] = value;
      }
      parsed.variables = variables;
    }
    if (entry.row !== undefined) parsed.row = entry.row;
    out[i] = parsed;
  }
  return out;
}

/**
 * A start body through `StartJobHttpBodySchema`, with the same answer and the same words. A plain
 * list of recipients (`plainRecipients`) is checked without zod; the schema then checks the rest of
 * the body with the list's first row that has a number (its rules over the list: not both lists, not
 * every row blank), and the whole body again only when that finds a fault, for its words.
 */
export function checkStartBody(body: unknown): SchemaCheck<z.output<typeof StartJobHttpBodySchema>> {
  const list: unknown = isPlainObject(body) ? body.recipients : undefined;
  const plain = Array.isArray(list) && list.length > 1 ? plainRecipients(list) : undefined;
  if (!plain) return checkWith(StartJobHttpBodySchema, body);
  const rows = list as unknown[];
  const probe = rows.find((r) => !isBlank((r as { phone?: unknown }).phone)) ?? rows[0];
  const rest = checkWith(StartJobHttpBodySchema, { ...(body as object), recipients: [probe] });
  if (!rest.ok) return checkWith(StartJobHttpBodySchema, body);
  return { ok: true, value: { ...rest.value, recipients: plain } };
}

/** `?since=` of GET /job-logs: an ISO 8601 time or milliseconds since 1970. */
export const JobLogsQuerySchema = z.object({
  since: z
    .string({ error: JOB_MESSAGES.invalidSince })
    .optional()
    .refine((v) => parseSince(v) !== null, JOB_MESSAGES.invalidSince)
    .meta({ description: 'Only entries strictly after this time (ISO 8601 or epoch ms)' }),
});

/**
 * `since` of `GET /job-logs`: an ISO 8601 time or milliseconds since 1970. Undefined (no filter) when
 * absent; null when it is not a time.
 */
export function parseSince(value: unknown): Date | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim();
  const date = /^\d+$/.test(text) ? new Date(Number(text)) : new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export const JobProgressSchema = z.object({
  total: z.int(),
  sent: z.int(),
  failed: z.int(),
  /** Recipients not sent to because they opted out or are known not to be on WhatsApp; present when > 0. */
  skipped: z.int().optional(),
});
export const SuccessEntrySchema = z.object({ originalNumber: z.string(), timestamp: z.iso.datetime() });
export const FailedEntrySchema = z.object({ phoneNumber: z.string(), timestamp: z.iso.datetime(), error: z.string() });
/** A recipient a job did not send to: opted out, or known not to be on WhatsApp. */
export const SkippedEntrySchema = z.object({
  phoneNumber: z.string(),
  reason: z.enum(SKIP_REASONS),
  timestamp: z.iso.datetime(),
});

/** What a job (and every message of it) carried as an attachment: the report's "Attachment". */
export const JobAttachmentSchema = z.object({
  /** The attachment's id (GET /api/media/{id}): "Send again" brings it along while it is stored. */
  mediaId: z.string(),
  kind: z.enum(MEDIA_KINDS),
  fileName: z.string(),
  /** Bytes. */
  size: z.int(),
});
export type JobAttachment = z.output<typeof JobAttachmentSchema>;

/** The `job` of `GET /job-status/{jobId}` (SPEC §3 Bulk job). */
export const JobViewSchema = z.object({
  jobId: z.string(),
  status: z.enum(JOB_STATUSES),
  progress: JobProgressSchema,
  /** `skippedList`: opted-out and not-on-WhatsApp recipients, present when there are any. */
  results: z.object({
    successList: z.array(SuccessEntrySchema),
    failedList: z.array(FailedEntrySchema),
    skippedList: z.array(SkippedEntrySchema).optional(),
  }),
  error: z.string().nullable(),
  /** Minutes, estimated at start from the configured delay. */
  estimatedTime: z.int(),
  /** When the next message of this job is due (the web's countdown); null when none is scheduled. */
  nextSendAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  startedAt: z.iso.datetime().nullable(),
  finishedAt: z.iso.datetime().nullable(),
  // The sending policy's fields: always sent by the jobs service; optional so older clients and
  // fixtures stay valid.
  /** When a scheduled job starts sending. */
  startAt: z.iso.datetime().nullable().optional(),
  /** Why the job waits: `paused` jobs, and `unlinked` while still `running`. */
  pausedReason: z.enum(PAUSED_REASONS).nullable().optional(),
  /** When sending goes on by itself (null when the user must resume, or nothing waits). */
  resumesAt: z.iso.datetime().nullable().optional(),
  /** When the last message is expected, under the policy in force at start. */
  estimatedFinishAt: z.iso.datetime().nullable().optional(),
  /** The file every message of the job carried (its text the caption); absent for text only. */
  attachment: JobAttachmentSchema.optional(),
});

/** SPEC §3 Job log entry. */
export const JobLogEntrySchema = z.object({
  type: z.enum(JOB_LOG_TYPES),
  message: z.string(),
  timestamp: z.iso.datetime(),
});

export const StartJobAnswerSchema = z.object({
  success: z.literal(true),
  jobId: z.string(),
  estimatedTime: z.int().meta({ description: 'Minutes' }),
});
export const JobAnswerSchema = z.object({ success: z.literal(true), job: JobViewSchema });
export const JobLogsAnswerSchema = z.object({ success: z.literal(true), logs: z.array(JobLogEntrySchema) });

// ---- Revalidation of `GET /job-status/{jobId}`: the jobs service gives each answer a version
// that changes whenever anything in it can change; the gateway sends it as the ETag and forwards the
// versions an `If-None-Match` names, so an unchanged job costs one indexed query and a 304, not its
// lists. The ETag is weak: the version stands for what the job says, and a body read while a send was
// being recorded may differ in bytes (a list a step ahead of the counts) under the same version.

/**
 * What the version stands for besides the stored job: the answer's shape. Raise the number when the
 * answer changes for the same stored job (a field worded or computed differently, a list's order), so
 * every copy cached before the change is answered in full once; new fields change it by themselves.
 */
export const JOB_STATUS_SHAPE = `1:${Object.keys(JobAnswerSchema.shape).join(',')}:${Object.keys(JobViewSchema.shape).join(',')}:${Object.keys(JobViewSchema.shape.results.shape).join(',')}`;

/**
 * Size rules of the jobs calls. The start body crosses NATS in one message today; staging it (a
 * bigger rule) only changes this line.
 */
export const JOB_HTTP = {
  /** Staged in the JetStream object store when it is over one NATS message: only the gateway's START_BODY_LIMIT bounds it. */
  start: { maxBodyBytes: Number.POSITIVE_INFINITY },
} as const satisfies Record<string, HttpCallRule>;

/** `GET /api/jobs/pacing`: the delays the jobs service sends with, so estimates before a start match its own. */
export const JobPacingAnswerSchema = z.object({
  success: z.literal(true),
  sendDelayMs: z.int().meta({ example: 4000 }),
  sendJitterMs: z.int().meta({ example: 0 }),
});

// ---- NATS requests: the envelope the jobs service checks before a handler runs. Bodies and query
// values travel as the client sent them (`unknown`) where the service checks them itself (the start's
// rules, the policy, the opt-out lists, the result queries), so those refusals keep their own codes and words.

/** A request that names only the acting user (`jobs.pacing`, `jobs.policy.get`, opt-out settings…). */
export const JobsUserRequestSchema = z.object({ userId: RpcUserIdSchema });

/** One of the user's jobs (status, cancel, pause, resume): another user's job is "not found". */
export const JobRefSchema = z.object({ userId: RpcUserIdSchema, jobId: RpcIdSchema });

/** `jobs.logs`: entries strictly after `since` (ISO or epoch ms; the service says when it is not a time). */
export const JobLogsRequestSchema = JobRefSchema.extend({ since: z.string().max(100).optional() });

/** `*` (any current answer) or one of our versions. */
export const JobStatusVersionSchema = z.union([z.literal('*'), z.string().regex(JOB_STATUS_VERSION_PATTERN)]);

/** `jobs.status`: `ifNoneMatch` holds the versions the client has; one of them still current is `{ notModified }`. */
export const JobStatusRequestSchema = JobRefSchema.extend({
  ifNoneMatch: z.array(JobStatusVersionSchema).min(1).max(JOB_STATUS_REVALIDATION.maxVersions).optional(),
});

/**
 * `jobs.start`: the body of `POST /start-bulk-messages` with the acting user. The body's fields are
 * checked by the jobs service (`checkStartJob`, `checkStartAt`); a body too big for one NATS message is
 * `staged` in the object store and only its name travels.
 */
export const StartJobRequestSchema = z.object({
  userId: RpcUserIdSchema,
  /** The start's own fields (START_JOB_FIELDS), unchecked: see StartJobBodySchema. */
  ...(Object.fromEntries(START_JOB_FIELDS.map((k) => [k, z.unknown().optional()])) as {
    [K in StartJobField]: z.ZodOptional<z.ZodUnknown>;
  }),
  /** The `Idempotency-Key` header; the gateway makes one when the client sent none. */
  idempotencyKey: z.string().min(1).max(RESULTS_LIMITS.idempotencyKeyMaxLength).optional(),
  /** The body was too big for one NATS message: read it from the object store. */
  staged: z.object({ bucket: RpcIdSchema, name: RpcIdSchema }).optional(),
  /** One message of POST /v1/messages: sent before the account's queued campaign messages (same policy, caps and opt-outs). */
  transactional: z.boolean().optional(),
});

/** `jobs.policy.set`: `policy` is a partial update, checked by the service (`applyPolicyUpdate`). */
export const PolicySetRequestSchema = z.object({ userId: RpcUserIdSchema, policy: z.unknown().optional() });

/** `jobs.results`: one page of a job's report; the query values are checked with `jobResultsQuerySchema`. */
export const JobResultsRequestSchema = JobRefSchema.extend({
  status: z.unknown().optional(),
  q: z.unknown().optional(),
  cursor: z.unknown().optional(),
  limit: z.unknown().optional(),
});
/** `jobs.list`: one page of the campaign history; the query values are checked with `jobHistoryQuerySchema`. */
export const JobHistoryRequestSchema = z.object({
  userId: RpcUserIdSchema,
  cursor: z.unknown().optional(),
  limit: z.unknown().optional(),
  active: z.unknown().optional(),
});
/** `jobs.export`: the file goes to `inbox` (the service checks it is a NATS inbox); `format` is checked with `jobExportQuerySchema`. */
export const JobExportRequestSchema = JobRefSchema.extend({
  format: z.unknown().optional(),
  tz: z.unknown().optional(),
  inbox: RpcIdSchema,
});

/** `jobs.optouts.list`: the query values are checked by the service with `optOutSchemas().listQuery`. */
export const OptOutListRequestSchema = z.object({
  userId: RpcUserIdSchema,
  cursor: z.unknown().optional(),
  limit: z.unknown().optional(),
  q: z.unknown().optional(),
});
/** `jobs.optouts.add` and `.check`: the numbers are checked by the service (`checkOptOutNumbers`). */
export const OptOutNumbersRequestSchema = z.object({ userId: RpcUserIdSchema, phoneNumbers: z.unknown().optional() });
/** `jobs.optouts.remove`: the number is checked (and normalised) by the service. */
export const OptOutRemoveRequestSchema = z.object({ userId: RpcUserIdSchema, phone: z.unknown().optional() });
/** `jobs.optouts.export`: one page of the whole list; `cursor` is the last page's. */
export const OptOutExportRequestSchema = z.object({
  userId: RpcUserIdSchema,
  cursor: z.string().max(LIMITS.rpcIdMaxLength).optional(),
});
/** `jobs.optouts.settings.set`: a partial update, checked by the service with `optOutSchemas().settingsPatch`. */
export const OptOutSettingsSetRequestSchema = z.object({ userId: RpcUserIdSchema, settings: z.unknown().optional() });

// ---- the types of the payloads above
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

/** The answer of `POST /start-bulk-messages`. */
export type StartJobAnswer = z.output<typeof StartJobAnswerSchema>;

// ---- opt-outs: the per-account suppression list the jobs service owns and enforces

/** The notice on OPTED_OUT_SUBJECT: the numbers one user's list just took. */
export const OptedOutNoticeSchema = z.object({ userId: z.string().min(1), phones: z.array(z.string()).max(1000) });
export type OptedOutNotice = z.output<typeof OptedOutNoticeSchema>;

// The opt-out schemas: zod gives the type and the check; the refusals carry OPT_OUT_MESSAGES. They are
// built on first use, so a page that imports contracts without checking opt-outs (the landing page)
// builds none of them.

/** A zod 4 type error: `required` when the field is absent (or null), `notOfType` when it is something else. */
function typeError(required: string, notOfType: string) {
  return {
    error: (issue: { input?: unknown }) => (issue.input === undefined || issue.input === null ? required : notOfType),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Query values the browser sends empty (`?limit=`) count as not given. */
const blankToUndefined = (v: unknown) =>
  isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x === '' ? undefined : x])) : v;

function buildSchemas() {
  const keyword = z
    .string({ error: OPT_OUT_MESSAGES.keywordsNotAList })
    .transform((k) => k.trim())
    .refine((k) => k !== '', OPT_OUT_MESSAGES.keywordBlank)
    .refine((k) => k.length <= OPT_OUT_LIMITS.keywordMaxLength, OPT_OUT_MESSAGES.keywordTooLong)
    .refine((k) => !hasNul(k), REQUEST_MESSAGES.nulCharacter('keywords'));

  const settings = z.object({
    keywords: z
      .array(keyword, typeError(OPT_OUT_MESSAGES.keywordsEmpty, OPT_OUT_MESSAGES.keywordsNotAList))
      .min(1, OPT_OUT_MESSAGES.keywordsEmpty)
      .max(OPT_OUT_LIMITS.keywordsMax, OPT_OUT_MESSAGES.keywordsTooMany),
    confirmationEnabled: z.boolean({ error: OPT_OUT_MESSAGES.confirmationEnabledNotBoolean }),
    confirmationText: z
      .string({ error: OPT_OUT_MESSAGES.confirmationTextRequired })
      .transform((t) => t.trim())
      .refine((t) => t !== '', OPT_OUT_MESSAGES.confirmationTextRequired)
      .refine((t) => t.length <= OPT_OUT_LIMITS.confirmationTextMax, OPT_OUT_MESSAGES.confirmationTextTooLong)
      .refine((t) => !hasNul(t), REQUEST_MESSAGES.nulCharacter('confirmationText')),
  });

  const listQuery = z.object({
    cursor: z.string({ error: OPT_OUT_MESSAGES.invalidCursor }).max(200, OPT_OUT_MESSAGES.invalidCursor).optional(),
    limit: z.coerce
      .number({ error: OPT_OUT_MESSAGES.invalidLimit })
      .int(OPT_OUT_MESSAGES.invalidLimit)
      .min(1, OPT_OUT_MESSAGES.invalidLimit)
      .max(OPT_OUT_LIMITS.listPageMax, OPT_OUT_MESSAGES.invalidLimit)
      .optional(),
    /** Digits anywhere in the number. */
    q: z
      .string({ error: OPT_OUT_MESSAGES.invalidSearch })
      .transform((q) => q.replace(/[\s\-+()]/g, ''))
      .refine((q) => /^\d{0,15}$/.test(q), OPT_OUT_MESSAGES.invalidSearch)
      .optional(),
  });

  return {
    /** `{keywords, confirmationEnabled, confirmationText}` as stored. */
    settings,
    /** `PUT /api/opt-outs/{userId}/settings`: any of the three fields; the others keep their value. */
    settingsPatch: settings.partial(),
    /** `GET /api/opt-outs/{userId}?cursor=&limit=&q=` */
    listQuery,
    /** The list query as the gateway reads it from the URL: an empty value is no value. */
    listHttpQuery: z.preprocess(blankToUndefined, listQuery),
    /** `GET /api/opt-outs/{userId}/export?format=csv` */
    exportQuery: z.object({ format: z.enum(['csv'], { error: OPT_OUT_MESSAGES.invalidExportFormat }).optional() }),
    /**
     * `POST /api/opt-outs/{userId}` (add, import) and `.../check`: the shape of `{phoneNumbers}`. The
     * numbers themselves (blank entries, how many, which are malformed) are `checkOptOutNumbers`'s, run
     * by the jobs service; a body that is not an object is a form with nothing in it.
     */
    phoneNumbersBody: z.preprocess(
      (v) => (isObject(v) ? v : {}),
      z.object({
        phoneNumbers: z
          .array(z.unknown(), typeError(OPT_OUT_MESSAGES.phoneNumbersRequired, OPT_OUT_MESSAGES.phoneNumbersNotAList))
          .meta({
            description: '8-digit Hong Kong numbers (852/+852 stripped, duplicates merged)',
            example: ['91234567', '+852 6123 4567'],
          }),
      }),
    ),
    /**
     * `events.message.received` as the opt-outs consumer checks it before use: the one event schema of
     * contracts, with bounds on what the consumer stores or compares.
     */
    messageReceived: MessageReceivedEventSchema.extend({
      eventId: z.string().min(1).max(200),
      userId: z.string().min(1).max(200),
    }),
  };
}

type OptOutSchemas = ReturnType<typeof buildSchemas>;
let schemas: OptOutSchemas | undefined;
/** The opt-out payload schemas (built once, on first use). */
export function optOutSchemas(): OptOutSchemas {
  return (schemas ??= buildSchemas());
}

export type OptOutSettings = z.output<OptOutSchemas['settings']>;
export type OptOutSettingsPatch = z.input<OptOutSchemas['settingsPatch']>;
export type OptOutListQuery = z.input<OptOutSchemas['listQuery']>;

export const DEFAULT_OPT_OUT_SETTINGS: OptOutSettings = {
  keywords: [...DEFAULT_OPT_OUT_KEYWORDS],
  confirmationEnabled: false,
  confirmationText: DEFAULT_OPT_OUT_CONFIRMATION,
};

// ---- campaign results

// Query schemas (the gateway validates, the jobs service validates again).

// A query value arrives as a string, or as a list when the name is repeated (`?limit=1&limit=2`): a
// list gets the field's own message, like any other wrong value, never the parser's.
const intInRange = (max: number, fallback: number) =>
  z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
      if (!Number.isInteger(n) || n < 1 || n > max) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidLimit(max) });
        return z.NEVER;
      }
      return n;
    });

const cursorSchema = z
  .unknown()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string' || v.length > 200 || !/^[A-Za-z0-9_-]*$/.test(v)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidCursor });
      return z.NEVER;
    }
    return v;
  });

/** `status=` of the report: one status or several, comma-separated; absent = every recipient. */
const statusFilterSchema = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const parts = (Array.isArray(v) ? v.join(',') : v)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (parts.length === 0 || !parts.every((s) => (RECIPIENT_RESULT_STATUSES as readonly string[]).includes(s))) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidStatus });
      return z.NEVER;
    }
    return [...new Set(parts)] as RecipientResultStatus[];
  });

/**
 * The digits a report search looks for in a recipient's 8-digit number: spaces, `+`, `-` and brackets
 * dropped, and the 852 country code when more than 8 digits follow from it, so `91234567`,
 * `85291234567` and `+852 9123 4567` find the same row (and `9123` finds it too). Undefined when `q`
 * is not digits within RESULTS_LIMITS.searchMaxDigits.
 */
export function reportSearchDigits(q: string): string | undefined {
  const digits = q.replace(/[\s\-+()]/g, '');
  if (!/^\d*$/.test(digits) || digits.length > RESULTS_LIMITS.searchMaxDigits) return undefined;
  return digits.length > 8 && digits.startsWith('852') ? digits.slice(3) : digits;
}

/** `q=` of the report: a number or part of one; absent or empty = every recipient. */
const reportSearchSchema = z
  .unknown()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const digits = typeof v === 'string' ? reportSearchDigits(v) : undefined;
    if (digits === undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidReportSearch });
      return z.NEVER;
    }
    return digits === '' ? undefined : digits;
  });

/** Query of `GET /job-results/{jobId}`. */
export const jobResultsQuerySchema = z.object({
  status: statusFilterSchema,
  q: reportSearchSchema,
  cursor: cursorSchema,
  limit: intInRange(RESULTS_LIMITS.reportPageMax, RESULTS_LIMITS.reportPageDefault),
});
export type JobResultsQuery = z.output<typeof jobResultsQuerySchema>;

/** Query of `GET /job-results/{jobId}/export`. */
export const jobExportQuerySchema = z.object({
  format: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      const f = v === undefined ? 'csv' : typeof v === 'string' ? v.trim().toLowerCase() : '';
      if (!(EXPORT_FORMATS as readonly string[]).includes(f)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidFormat });
        return z.NEVER;
      }
      return f as ExportFormat;
    }),
  /** The user's time zone (IANA name): the export's times are in it. UTC when absent. */
  tz: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return 'UTC';
      if (isTimeZone(v)) return v;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidTimeZone });
      return z.NEVER;
    }),
});
export type JobExportQuery = z.output<typeof jobExportQuerySchema>;

/** Query of `GET /api/jobs/{userId}`: `active=true` lists only the jobs not finished yet (queued, scheduled, running, paused). */
export const jobHistoryQuerySchema = z.object({
  cursor: cursorSchema,
  limit: intInRange(RESULTS_LIMITS.historyPageMax, RESULTS_LIMITS.historyPageDefault),
  active: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '' || v === false || v === 'false') return false;
      if (v === true || v === 'true') return true;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: RESULTS_MESSAGES.invalidActive });
      return z.NEVER;
    }),
});
export type JobHistoryQuery = z.output<typeof jobHistoryQuerySchema>;

/** The `Idempotency-Key` header: absent is fine; present must be sane. */
export const idempotencyKeySchema = z
  .string()
  .min(1, RESULTS_MESSAGES.idempotencyKeyInvalid)
  .max(RESULTS_LIMITS.idempotencyKeyMaxLength, RESULTS_MESSAGES.idempotencyKeyInvalid)
  .regex(/^[\x21-\x7e]+$/, RESULTS_MESSAGES.idempotencyKeyInvalid);
