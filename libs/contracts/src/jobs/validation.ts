import { LIMITS } from '../common/limits.js';
import { isBlankText, REQUEST_MESSAGES } from '../common/schema.js';
import { normalizeHkPhone } from '../web/phone.js';
import { placeholderFiller, placeholdersIn } from '../web/placeholders.js';
import { JobsErrorCode, OptOutsErrorCode } from './errors.js';
import { JOB_STATUS_REVALIDATION, JOB_STATUS_VERSION_PATTERN, OPT_OUT_LIMITS } from './limits.js';
import { JOB_MESSAGES, OPT_OUT_MESSAGES } from './messages.js';
import { checkStartBody } from './schemas.js';

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
  const checked = checkStartBody(body);
  if (!checked.ok) return refuse(startJobErrorCode(checked.field, checked.message), checked.message);
  const { message, recipients, phoneNumbers } = checked.value;

  // The spreadsheet row the client named, else the 1-based position in what the user sent.
  const list: readonly { phone?: unknown; row?: unknown; variables?: Record<string, unknown> | null }[] =
    recipients && recipients.length > 0 ? recipients : (phoneNumbers ?? []).map((phone) => ({ phone }));
  const names = placeholdersIn(message);
  const sizes = new VariableSizes();
  // Rows without a value for each of the message's placeholders.
  const missing = names.map(() => [] as number[]);
  const invalid: string[] = [];
  const seen = new Set<string>();
  const unique: { row: number; phone: string; variables: Record<string, string> }[] = [];
  let nonBlank = 0;
  for (let i = 0; i < list.length; i++) {
    const entry = list[i]!;
    if (isBlank(entry.phone)) continue;
    nonBlank++;
    const phone = normalizeHkPhone(entry.phone);
    if (phone === undefined) {
      invalid.push(String(entry.phone).trim().slice(0, ECHO_MAX));
      continue;
    }
    if (seen.has(phone)) continue;
    seen.add(phone);
    const row = sheetRow(entry.row) ?? i + 1;
    const values = textValues(entry.variables);
    sizes.add(row, values);
    names.forEach((name, k) => {
      if (!Object.hasOwn(values, name)) missing[k]!.push(row);
    });
    unique.push({ row, phone, variables: values });
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

  const tooBig = sizes.refusal(unique);
  if (tooBig) return tooBig;

  const personalised = names.length > 0;
  const k = missing.findIndex((rows) => rows.length > 0);
  if (k >= 0) {
    return refuse(JobsErrorCode.MissingVariable, JOB_MESSAGES.missingVariable(names[k]!, missing[k]!), {
      variable: names[k]!,
      rows: missing[k]!,
    });
  }
  const fill = placeholderFiller(message);
  const tooLong: number[] = [];
  const prepared = unique.map((r): PreparedRecipient => {
    const text = personalised ? fill(r.variables) : message;
    if (personalised && text.length > LIMITS.messageMaxLength) tooLong.push(r.row);
    return { phone: r.phone, text, ...(hasAny(r.variables) ? { variables: r.variables } : {}) };
  });
  if (tooLong.length > 0)
    return refuse(JobsErrorCode.RenderedTooLong, JOB_MESSAGES.renderedTooLong(tooLong), { rows: tooLong });
  return { ok: true, recipients: prepared, personalised, duplicatesMerged: nonBlank - unique.length };
}

const NO_VARIABLES = Object.freeze(Object.create(null) as Record<string, string>);

/**
 * A recipient's variables that have a value, as text, in an object without a prototype (a name like
 * `__proto__` is a key like any other): the schema's own object when every value already is text
 * with something to show (most rows), else a copy.
 */
function textValues(variables: Record<string, unknown> | null | undefined): Record<string, string> {
  if (!variables) return NO_VARIABLES;
  let plain = true;
  for (const name in variables) {
    const raw = variables[name];
    if (typeof raw !== 'string' || isBlankText(raw)) {
      plain = false;
      break;
    }
  }
  if (plain) return variables as Record<string, string>;
  const values = Object.create(null) as Record<string, string>;
  for (const name in variables) {
    const value = variableValue(variables[name]);
    if (value !== undefined) values[name] = value;
  }
  return values;
}

function hasAny(values: Record<string, string>): boolean {
  for (const _ in values) return true;
  return false;
}

/**
 * The variables' size rules (LIMITS), gathered row by row: at most `variablesPerJobMax` distinct names
 * in the whole job, a name at most `variableNameMaxLength` characters, a value at most
 * `messageMaxLength`. They hold for every variable with a value, used or not, since each is stored and
 * shown in the report.
 */
class VariableSizes {
  private readonly names = new Set<string>();
  private readonly longNames: number[] = [];
  /** The first variable seen with a value too long (its name within the limit). */
  private longValue: string | undefined;

  add(row: number, variables: Record<string, string>): void {
    let longName = false;
    for (const name in variables) {
      this.names.add(name);
      if (name.length > LIMITS.variableNameMaxLength) longName = true;
      else if (this.longValue === undefined && variables[name]!.length > LIMITS.messageMaxLength) this.longValue = name;
    }
    if (longName) this.longNames.push(row);
  }

  refusal(rows: readonly { row: number; variables: Record<string, string> }[]): StartJobCheck | undefined {
    if (this.names.size > LIMITS.variablesPerJobMax) {
      return refuse(JobsErrorCode.TooManyVariables, JOB_MESSAGES.tooManyVariables(this.names.size), {
        max: LIMITS.variablesPerJobMax,
        count: this.names.size,
      });
    }
    if (this.longNames.length > 0) {
      return refuse(JobsErrorCode.VariableNameTooLong, JOB_MESSAGES.variableNameTooLong(this.longNames), {
        max: LIMITS.variableNameMaxLength,
        rows: this.longNames,
      });
    }
    const name = this.longValue;
    if (name === undefined) return undefined;
    const found = rows.filter((r) => (r.variables[name]?.length ?? 0) > LIMITS.messageMaxLength).map((r) => r.row);
    return refuse(JobsErrorCode.VariableTooLong, JOB_MESSAGES.variableTooLong(name, found), {
      variable: name,
      max: LIMITS.messageMaxLength,
      rows: found,
    });
  }
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
