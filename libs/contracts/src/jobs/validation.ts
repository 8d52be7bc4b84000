import { LIMITS } from '../common/limits.js';
import { checkWith, isBlankText, REQUEST_MESSAGES } from '../common/schema.js';
import { normalizeHkPhone } from '../web/phone.js';
import { fillPlaceholders, placeholdersIn } from '../web/placeholders.js';
import { JobsErrorCode, OptOutsErrorCode } from './errors.js';
import { JOB_STATUS_REVALIDATION, JOB_STATUS_VERSION_PATTERN, OPT_OUT_LIMITS } from './limits.js';
import { JOB_MESSAGES, OPT_OUT_MESSAGES } from './messages.js';
import { StartJobHttpBodySchema } from './schemas.js';

export { parseSince } from './schemas.js';

/**
 * The start rules of a bulk job (SPEC §5 Sending screen, §9), shared by the jobs service (authoritative),
 * the gateway and the web (same words on all sides). The shape comes from `StartJobBodySchema`; the
 * rules over the whole list follow here. Pure functions over untrusted JSON: nothing here throws on
 * odd input, and every refusal carries the text a 400 shows.
 */

export interface PreparedRecipient {
  /** 8 Hong Kong digits, country code stripped: what the lists show and the idempotency key holds. */
  phone: string;
  /** What this recipient receives: the message with its placeholders filled. */
  text: string;
  /**
   * The row's variables that have a value (whether the message uses them or not: the report and its
   * export show them), in an object without a prototype; absent when there are none.
   */
  variables?: Record<string, string>;
}

export type StartJobCheck =
  | { ok: true; recipients: PreparedRecipient[]; personalised: boolean; duplicatesMerged: number }
  | { ok: false; code: JobsErrorCode; message: string; details?: Record<string, unknown> };

export interface StartJobLimits {
  maxRecipients: number;
}

/** An invalid entry is echoed back; a pasted novel is cut short. */
const ECHO_MAX = 32;

function refuse(code: JobsErrorCode, message: string, details?: Record<string, unknown>): StartJobCheck {
  return { ok: false, code, message, ...(details ? { details } : {}) };
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** A variable's value as text; undefined when it has none a message could show (blank or invisible only). */
export function variableValue(value: unknown): string | undefined {
  if (typeof value === 'string') return isBlankText(value) ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** A recipient's own spreadsheet row number, when the client sent a usable one. */
function sheetRow(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Text the start refuses whatever the field: NUL, lone surrogates. */
const TEXT_MESSAGES = new Set<string>(
  ['message', 'variables', 'clientId'].flatMap((field) => [
    REQUEST_MESSAGES.nulCharacter(field),
    REQUEST_MESSAGES.invalidText(field),
  ]),
);

/** The error code of a start body's first problem, by its field and message. */
export function startJobErrorCode(field: string, message: string): JobsErrorCode {
  if (TEXT_MESSAGES.has(message) || field.startsWith('clientId') || field.startsWith('clerkUserId'))
    return JobsErrorCode.InvalidField;
  if (message === JOB_MESSAGES.phoneNumbersAndRecipients) return JobsErrorCode.PhoneNumbersAndRecipients;
  if (message === JOB_MESSAGES.addPhoneNumbersFirst) return JobsErrorCode.PhoneNumbersRequired;
  if (field === 'message')
    return message === JOB_MESSAGES.messageTooLong ? JobsErrorCode.MessageTooLong : JobsErrorCode.MessageRequired;
  if (field === '') return JobsErrorCode.MessageRequired;
  return JobsErrorCode.InvalidRecipients;
}

/**
 * Checks a start request and prepares its recipients: numbers normalised (852/+852 stripped),
 * duplicates merged (the first row wins), placeholders filled per recipient.
 */
export function checkStartJob(
  body: unknown,
  limits: StartJobLimits = { maxRecipients: LIMITS.defaultMaxRecipientsPerJob },
): StartJobCheck {
  const checked = checkWith(StartJobHttpBodySchema, body);
  if (!checked.ok) return refuse(startJobErrorCode(checked.field, checked.message), checked.message);
  const { message, recipients, phoneNumbers } = checked.value;

  // The spreadsheet row the client named, else the 1-based position in what the user sent.
  const none: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const rows =
    recipients && recipients.length > 0
      ? recipients.map((r, i) => ({
          row: sheetRow(r.row) ?? i + 1,
          phone: r.phone as unknown,
          variables: (r.variables ?? none) as Record<string, unknown>,
        }))
      : (phoneNumbers ?? []).map((phone, i) => ({ row: i + 1, phone: phone as unknown, variables: none }));

  const invalid: string[] = [];
  const seen = new Set<string>();
  const unique: { row: number; phone: string; variables: Record<string, string> }[] = [];
  for (const row of rows) {
    if (isBlank(row.phone)) continue;
    const phone = normalizeHkPhone(row.phone);
    if (phone === undefined) {
      invalid.push(String(row.phone).trim().slice(0, ECHO_MAX));
    } else if (!seen.has(phone)) {
      seen.add(phone);
      // No prototype: a name like `__proto__` is a key like any other.
      const values = Object.create(null) as Record<string, string>;
      for (const [name, raw] of Object.entries(row.variables)) {
        const value = variableValue(raw);
        if (value !== undefined) values[name] = value;
      }
      unique.push({ row: row.row, phone, variables: values });
    }
  }
  if (invalid.length > 0) {
    return refuse(JobsErrorCode.InvalidPhoneNumbers, JOB_MESSAGES.invalidPhoneNumbers(invalid), { invalid });
  }
  if (unique.length > limits.maxRecipients) {
    return refuse(JobsErrorCode.TooManyRecipients, JOB_MESSAGES.tooManyRecipients(limits.maxRecipients), {
      max: limits.maxRecipients,
      count: unique.length,
    });
  }

  const tooBig = checkVariableSizes(unique);
  if (tooBig) return tooBig;

  const names = placeholdersIn(message);
  const personalised = names.length > 0;
  for (const name of names) {
    const missing = unique.filter((r) => !Object.hasOwn(r.variables, name)).map((r) => r.row);
    if (missing.length > 0) {
      return refuse(JobsErrorCode.MissingVariable, JOB_MESSAGES.missingVariable(name, missing), {
        variable: name,
        rows: missing,
      });
    }
  }
  const prepared = unique.map((r): PreparedRecipient => ({
    phone: r.phone,
    text: personalised ? fillPlaceholders(message, r.variables) : message,
    ...(Object.keys(r.variables).length > 0 ? { variables: r.variables } : {}),
  }));
  if (personalised) {
    const tooLong = unique.filter((_, i) => prepared[i]!.text.length > LIMITS.messageMaxLength).map((r) => r.row);
    if (tooLong.length > 0)
      return refuse(JobsErrorCode.RenderedTooLong, JOB_MESSAGES.renderedTooLong(tooLong), { rows: tooLong });
  }
  const nonBlank = rows.filter((r) => !isBlank(r.phone)).length;
  return { ok: true, recipients: prepared, personalised, duplicatesMerged: nonBlank - unique.length };
}

/**
 * The variables' size rules (LIMITS): at most `variablesPerJobMax` distinct names in the whole job, a
 * name at most `variableNameMaxLength` characters, a value at most `messageMaxLength`. They hold for
 * every variable with a value, used or not, since each is stored and shown in the report.
 */
function checkVariableSizes(
  rows: readonly { row: number; variables: Record<string, string> }[],
): StartJobCheck | undefined {
  const names = new Set<string>();
  const longNames: number[] = [];
  let longValue: string | undefined;
  for (const r of rows) {
    let longName = false;
    for (const [name, value] of Object.entries(r.variables)) {
      names.add(name);
      if (name.length > LIMITS.variableNameMaxLength) longName = true;
      else if (longValue === undefined && value.length > LIMITS.messageMaxLength) longValue = name;
    }
    if (longName) longNames.push(r.row);
  }
  if (names.size > LIMITS.variablesPerJobMax) {
    return refuse(JobsErrorCode.TooManyVariables, JOB_MESSAGES.tooManyVariables(names.size), {
      max: LIMITS.variablesPerJobMax,
      count: names.size,
    });
  }
  if (longNames.length > 0) {
    return refuse(JobsErrorCode.VariableNameTooLong, JOB_MESSAGES.variableNameTooLong(longNames), {
      max: LIMITS.variableNameMaxLength,
      rows: longNames,
    });
  }
  if (longValue !== undefined) {
    const name = longValue;
    const found = rows.filter((r) => (r.variables[name]?.length ?? 0) > LIMITS.messageMaxLength).map((r) => r.row);
    return refuse(JobsErrorCode.VariableTooLong, JOB_MESSAGES.variableTooLong(name, found), {
      variable: name,
      max: LIMITS.messageMaxLength,
      rows: found,
    });
  }
  return undefined;
}

// ---- opt-outs

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

// ---- job-status revalidation

/** One entity-tag (RFC 9110 §8.8.3: `[W/] DQUOTE *etagc DQUOTE`) and the comma or end after it. */
const ENTITY_TAG = /[ \t]*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(,|$)/y;

/**
 * The versions an `If-None-Match` header names (weak comparison: `W/` or not), `['*']` for `*`, or
 * undefined when there is none of ours: absent, empty, too long or malformed headers are ignored, as
 * if absent, so the answer is the whole job; tags that are not ours (an Express body hash a browser
 * cached from a gateway that did not version job-status) are skipped.
 */
export function ifNoneMatchVersions(header: unknown): string[] | undefined {
  if (typeof header !== 'string' || header.length > JOB_STATUS_REVALIDATION.ifNoneMatchMaxLength) return undefined;
  if (header.trim() === '*') return ['*'];
  const versions = new Set<string>();
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < header.length) {
    const tag = ENTITY_TAG.exec(header);
    if (!tag) return undefined;
    if (JOB_STATUS_VERSION_PATTERN.test(tag[1]!)) versions.add(tag[1]!);
    if (tag[2] === '') break;
  }
  return versions.size === 0 ? undefined : [...versions].slice(0, JOB_STATUS_REVALIDATION.maxVersions);
}
