import { MessageReceivedEventSchema } from '../common/events.js';
import { LIMITS } from '../common/limits.js';
import { MESSAGES } from '../common/messages.js';
import { hasNul, ONE_NATS_MESSAGE, REQUEST_MESSAGES, z, type HttpCallRule } from '../common/schema.js';
import { normalizeHkPhone } from '../web/phone.js';
import { JOB_MESSAGES } from './messages.js';
import type { JobsUserRequest } from './rpc.js';
import type { SkipReason } from './types.js';
import type {
  OptOutExportRequestSchema,
  OptOutListRequestSchema,
  OptOutNumbersRequestSchema,
  OptOutRemoveRequestSchema,
  OptOutSettingsSetRequestSchema,
} from './schemas.js';

/**
 * Opt-outs: the per-account suppression list the jobs service owns and enforces, the
 * keywords that put a sender on it, and the not-on-WhatsApp memory. Wire names, limits, texts and
 * payload schemas live here once; the jobs service, the gateway and the web import them.
 */

/**
 * Published on core NATS (not stored: the opt-out itself is, in Postgres) by the jobs replica that put
 * numbers on a user's list, once that committed. Every jobs replica hears it and withholds a send to
 * those numbers that it prepared ahead of its slot (JOBS_SEND_LEAD_MS); the next step's take then
 * passes over them and counts them skipped. Outside `events.>`, so it never reaches a browser.
 */
export const OPTED_OUT_SUBJECT = 'internal.jobs.opted-out';
export const OptedOutNoticeSchema = z.object({ userId: z.string().min(1), phones: z.array(z.string()).max(1000) });
export type OptedOutNotice = z.output<typeof OptedOutNoticeSchema>;

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

export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'UNSUBSCRIBE', '退訂', '取消訂閱'] as const;
export const DEFAULT_OPT_OUT_CONFIRMATION = 'You will no longer receive messages from us';

/** Why a number is on the list. */
export const OPT_OUT_REASONS = ['keyword', 'manual'] as const;
export type OptOutReason = (typeof OPT_OUT_REASONS)[number];

export enum OptOutsErrorCode {
  InvalidPhoneNumbers = 'OPT_OUT_PHONE_NUMBERS_INVALID',
  PhoneNumbersRequired = 'OPT_OUT_PHONE_NUMBERS_REQUIRED',
  TooManyPhoneNumbers = 'OPT_OUT_TOO_MANY_PHONE_NUMBERS',
  InvalidQuery = 'OPT_OUT_QUERY_INVALID',
  InvalidSettings = 'OPT_OUT_SETTINGS_INVALID',
  NotListed = 'OPT_OUT_NOT_LISTED',
}

export const OPT_OUT_MESSAGES = {
  phoneNumbersRequired: MESSAGES.addPhoneNumbersFirst,
  phoneNumbersNotAList: 'phoneNumbers must be a list of phone numbers',
  invalidPhoneNumbers: JOB_MESSAGES.invalidPhoneNumbers,
  tooManyPhoneNumbers: `At most ${OPT_OUT_LIMITS.addMax} numbers can be added at once`,
  tooManyToCheck: `At most ${OPT_OUT_LIMITS.checkMax.toLocaleString('en-US')} numbers can be checked at once`,
  invalidCursor: 'cursor is not valid: use the nextCursor of the previous page',
  invalidLimit: `limit must be a whole number from 1 to ${OPT_OUT_LIMITS.listPageMax}`,
  invalidSearch: `q must be up to ${OPT_OUT_LIMITS.searchMaxLength} digits`,
  invalidExportFormat: 'format must be csv',
  notListed: 'This number is not on your opt-out list',
  keywordsNotAList: 'keywords must be a list of words',
  keywordsEmpty: 'Keep at least one opt-out keyword, or recipients would have no way to stop your messages',
  keywordsTooMany: `At most ${OPT_OUT_LIMITS.keywordsMax} opt-out keywords`,
  keywordBlank: 'An opt-out keyword cannot be blank',
  keywordTooLong: `Each opt-out keyword must be ${OPT_OUT_LIMITS.keywordMaxLength} characters or less`,
  confirmationEnabledNotBoolean: 'confirmationEnabled must be true or false',
  confirmationTextRequired: 'The confirmation reply cannot be empty',
  confirmationTextTooLong: `The confirmation reply must be ${OPT_OUT_LIMITS.confirmationTextMax} characters or less`,
  settingsNotAnObject: 'Send {keywords, confirmationEnabled, confirmationText}',
  /** The review step (web). */
  willBeSkipped: (n: number) => `${n} ${n === 1 ? 'recipient has' : 'recipients have'} opted out and will be skipped`,
  notOnWhatsAppSkipped: (n: number) =>
    `${n} ${n === 1 ? 'recipient is' : 'recipients are'} not on WhatsApp and will be skipped`,
  /** Job log line for a start that skipped recipients. */
  skippedAtStart: (optedOut: number, notOnWhatsApp: number) =>
    'Skipped ' +
    [
      optedOut > 0 ? `${optedOut} ${optedOut === 1 ? 'recipient who has' : 'recipients who have'} opted out` : '',
      notOnWhatsApp > 0 ? `${notOnWhatsApp} ${notOnWhatsApp === 1 ? 'number' : 'numbers'} not on WhatsApp` : '',
    ]
      .filter(Boolean)
      .join(' and '),
  skippedMidJob: (phone: string, reason: SkipReason) => `Skipped ${phone}: ${SKIP_REASON_TEXT[reason]}`,
} as const;

export const SKIP_REASON_TEXT: Record<SkipReason, string> = {
  opted_out: 'opted out',
  not_on_whatsapp: 'not on WhatsApp',
};

// ---------------------------------------------------------------------------------------------------
// Schemas. zod gives the type and the check; the refusals carry the texts above. They are built on
// first use, so a page that imports contracts without checking opt-outs (the landing page) ships no zod.

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

/** Size rules of the opt-out calls with a body (the gateway answers 413 above them). */
export const OPT_OUT_HTTP = {
  /** Up to `addMax` numbers, as typed or imported. */
  add: ONE_NATS_MESSAGE,
  /** As many numbers as a job. */
  check: ONE_NATS_MESSAGE,
  /** Three small fields: 20 keywords and a short text fit many times over. */
  settings: { maxBodyBytes: 16 * 1024 },
} as const satisfies Record<string, HttpCallRule>;

export const DEFAULT_OPT_OUT_SETTINGS: OptOutSettings = {
  keywords: [...DEFAULT_OPT_OUT_KEYWORDS],
  confirmationEnabled: false,
  confirmationText: DEFAULT_OPT_OUT_CONFIRMATION,
};

export interface OptOutEntry {
  phoneNumber: string;
  reason: OptOutReason;
  at: string;
}
export interface OptOutListReply {
  optOuts: OptOutEntry[];
  nextCursor: string | null;
  /** How many numbers the whole list holds (not only those matching `q`). */
  total: number;
}

export interface SkippedEntry {
  phoneNumber: string;
  reason: SkipReason;
  timestamp: string;
}

export type PhoneListCheck =
  | { ok: true; phones: string[] }
  | { ok: false; code: OptOutsErrorCode; message: string; details?: Record<string, unknown> };

/** `{phoneNumbers: [...]}` of the add call: normalised like a job's numbers, duplicates merged. */
export function checkOptOutNumbers(value: unknown, max: number = OPT_OUT_LIMITS.addMax): PhoneListCheck {
  if (value === undefined || value === null)
    return { ok: false, code: OptOutsErrorCode.PhoneNumbersRequired, message: OPT_OUT_MESSAGES.phoneNumbersRequired };
  if (!Array.isArray(value))
    return { ok: false, code: OptOutsErrorCode.InvalidPhoneNumbers, message: OPT_OUT_MESSAGES.phoneNumbersNotAList };
  const entries = value.filter((v) => !(v === null || v === undefined || (typeof v === 'string' && v.trim() === '')));
  // An object or a list among the numbers is no number to echo back ("[object Object]").
  if (entries.some((v) => typeof v !== 'string' && typeof v !== 'number')) {
    return { ok: false, code: OptOutsErrorCode.InvalidPhoneNumbers, message: OPT_OUT_MESSAGES.phoneNumbersNotAList };
  }
  if (entries.length === 0)
    return { ok: false, code: OptOutsErrorCode.PhoneNumbersRequired, message: OPT_OUT_MESSAGES.phoneNumbersRequired };
  if (entries.length > max) {
    return {
      ok: false,
      code: OptOutsErrorCode.TooManyPhoneNumbers,
      message: max === OPT_OUT_LIMITS.addMax ? OPT_OUT_MESSAGES.tooManyPhoneNumbers : OPT_OUT_MESSAGES.tooManyToCheck,
      details: { max },
    };
  }
  const phones = new Set<string>();
  const invalid: string[] = [];
  for (const entry of entries) {
    const phone = normalizeHkPhone(entry);
    if (phone === undefined) invalid.push(String(entry).trim().slice(0, 32));
    else phones.add(phone);
  }
  if (invalid.length > 0) {
    return {
      ok: false,
      code: OptOutsErrorCode.InvalidPhoneNumbers,
      message: OPT_OUT_MESSAGES.invalidPhoneNumbers(invalid),
      details: { invalid },
    };
  }
  return { ok: true, phones: [...phones] };
}

/** How a keyword and a message are compared: trimmed, width-folded (ＳＴＯＰ = STOP), case-insensitive. */
export function keywordForm(text: string): string {
  return text.normalize('NFKC').trim().toLocaleUpperCase('en-US');
}

/** True when the whole message (trimmed, any case) is one of the keywords. */
export function isOptOutKeyword(text: unknown, keywords: readonly string[]): boolean {
  if (typeof text !== 'string') return false;
  const form = keywordForm(text);
  if (form === '' || form.length > OPT_OUT_LIMITS.keywordMaxLength * 4) return false;
  return keywords.some((k) => keywordForm(k) === form);
}

/**
 * The sender of an inbound message as a list entry: `85291234567`, `+852 9123 4567`,
 * `85291234567@c.us` and `91234567` are all `91234567`. Undefined for numbers a job could never
 * send to (other countries, groups).
 */
export function optOutPhoneOf(from: unknown): string | undefined {
  if (typeof from !== 'string') return undefined;
  const at = from.indexOf('@');
  if (at >= 0 && from.slice(at) !== '@c.us') return undefined;
  return normalizeHkPhone(at >= 0 ? from.slice(0, at) : from);
}

/** CSV of the export: a header, then one line per number (the values never hold a comma or quote). */
export const OPT_OUT_CSV_HEADER = 'phoneNumber,reason,at';
export function optOutCsvLine(e: OptOutEntry): string {
  return `${e.phoneNumber},${e.reason},${e.at}`;
}

// ---------------------------------------------------------------------------------------------------
// NATS request/reply (the gateway validates shapes; the jobs service checks again, it is the owner).

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

/**
 * Idempotency key of the confirmation reply to one STOP: the `<jobId>:<recipient>` form of job sends,
 * so the sessions ledger parses it like theirs, with the inbound event in place of a job.
 */
export function optOutConfirmationKey(eventId: string, phone: string): string {
  return `opt-out-${eventId}:${phone}`;
}
