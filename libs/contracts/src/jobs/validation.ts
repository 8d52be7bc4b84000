import { LIMITS } from '../common/limits.js';
import { normalizeHkPhone } from '../web/phone.js';
import { fillPlaceholders, placeholdersIn } from '../web/placeholders.js';
import { JobsErrorCode } from './errors.js';
import { JOB_MESSAGES } from './messages.js';

/**
 * The start rules of a bulk job (SPEC §5 Sending screen, §9), shared by the jobs service (authoritative)
 * and the web (same words on both sides). Pure functions over untrusted JSON: nothing here throws on
 * odd input, and every refusal carries the text a 400 shows.
 */

export interface PreparedRecipient {
  /** 8 Hong Kong digits, country code stripped: what the lists show and the idempotency key holds. */
  phone: string;
  /** What this recipient receives: the message with its placeholders filled. */
  text: string;
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

/** A variable's value as text; undefined when it has none a message could show. */
export function variableValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

interface Row {
  /** 1-based position in what the user sent, so "row 3" matches their sheet. */
  row: number;
  phone: unknown;
  variables: Record<string, string>;
}

function rowsOf(body: Record<string, unknown>): Row[] | StartJobCheck {
  const { recipients, phoneNumbers } = body;
  if (Array.isArray(recipients) && recipients.length > 0) {
    const rows: Row[] = [];
    for (const [i, entry] of recipients.entries()) {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        return refuse(JobsErrorCode.InvalidRecipients, JOB_MESSAGES.recipientsNotAList);
      }
      const { phone, variables } = entry as { phone?: unknown; variables?: unknown };
      if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
        return refuse(JobsErrorCode.InvalidRecipients, JOB_MESSAGES.recipientsNotAList);
      }
      const values: Record<string, string> = {};
      for (const [name, raw] of Object.entries((variables ?? {}) as Record<string, unknown>)) {
        const value = variableValue(raw);
        if (value !== undefined) values[name] = value;
      }
      if (!isBlank(phone)) rows.push({ row: i + 1, phone, variables: values });
    }
    return rows;
  }
  if (recipients !== undefined && recipients !== null && !Array.isArray(recipients)) {
    return refuse(JobsErrorCode.InvalidRecipients, JOB_MESSAGES.recipientsNotAList);
  }
  if (phoneNumbers === undefined || phoneNumbers === null) return [];
  if (!Array.isArray(phoneNumbers)) return refuse(JobsErrorCode.InvalidRecipients, JOB_MESSAGES.phoneNumbersNotAList);
  const rows: Row[] = [];
  for (const [i, phone] of phoneNumbers.entries()) if (!isBlank(phone)) rows.push({ row: i + 1, phone, variables: {} });
  return rows;
}

/**
 * Checks a start request and prepares its recipients: numbers normalised (852/+852 stripped),
 * duplicates merged (the first row wins), placeholders filled per recipient.
 */
export function checkStartJob(body: unknown, limits: StartJobLimits = { maxRecipients: LIMITS.defaultMaxRecipientsPerJob }): StartJobCheck {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const message = input.message;
  if (typeof message !== 'string' || message.trim() === '') {
    return refuse(JobsErrorCode.MessageRequired, JOB_MESSAGES.enterMessageFirst);
  }
  const rows = rowsOf(input);
  if (!Array.isArray(rows)) return rows;
  if (rows.length === 0) return refuse(JobsErrorCode.PhoneNumbersRequired, JOB_MESSAGES.addPhoneNumbersFirst);
  if (message.length > LIMITS.messageMaxLength) return refuse(JobsErrorCode.MessageTooLong, JOB_MESSAGES.messageTooLong);

  const invalid: string[] = [];
  const seen = new Set<string>();
  const unique: { row: number; phone: string; variables: Record<string, string> }[] = [];
  for (const row of rows) {
    const phone = normalizeHkPhone(row.phone);
    if (phone === undefined) {
      invalid.push(String(row.phone).trim().slice(0, ECHO_MAX));
    } else if (!seen.has(phone)) {
      seen.add(phone);
      unique.push({ row: row.row, phone, variables: row.variables });
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

  const names = placeholdersIn(message);
  const personalised = names.length > 0;
  for (const name of names) {
    const missing = unique.filter((r) => !Object.hasOwn(r.variables, name)).map((r) => r.row);
    if (missing.length > 0) {
      return refuse(JobsErrorCode.MissingVariable, JOB_MESSAGES.missingVariable(name, missing), { variable: name, rows: missing });
    }
  }
  const recipients = unique.map((r) => ({ phone: r.phone, text: personalised ? fillPlaceholders(message, r.variables) : message }));
  if (personalised) {
    const tooLong = unique.filter((_, i) => recipients[i]!.text.length > LIMITS.messageMaxLength).map((r) => r.row);
    if (tooLong.length > 0) return refuse(JobsErrorCode.RenderedTooLong, JOB_MESSAGES.renderedTooLong(tooLong), { rows: tooLong });
  }
  return { ok: true, recipients, personalised, duplicatesMerged: rows.length - unique.length };
}

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
