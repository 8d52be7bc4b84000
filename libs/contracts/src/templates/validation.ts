import { LIMITS, TEMPLATE_CATEGORIES, type TemplateCategory } from '../common/limits.js';
import { invalidPhoneNumbersMessage, MESSAGES } from '../common/messages.js';
import { TEMPLATE_MESSAGES } from './messages.js';
import type { Template, TemplateField, TemplateFieldErrors, TemplateInput, TemplateListFilter } from './types.js';

/**
 * The template form rules of SPEC §5, shared by the templates service (authoritative) and the web form
 * (same words on both sides). Pure functions over untrusted JSON: nothing here throws on odd input.
 */

export type TemplateValidationResult<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      /** What a 400 puts in `error`: "Please fix the form errors" unless the body is not a form at all. */
      message: string;
      errors: TemplateFieldErrors;
    };

export const TEMPLATE_FIELDS: readonly TemplateField[] = [
  'name',
  'description',
  'message_content',
  'phone_numbers',
  'category',
  'is_favorite',
];

export const TEMPLATE_COPY_SUFFIX = ' (Copy)';

const PHONE_DIGITS = new RegExp(`^\\d{${LIMITS.templatePhoneMinDigits},${LIMITS.templatePhoneMaxDigits}}$`);
/** Separators people type or paste inside a number; they carry no digits. */
const PHONE_SEPARATORS = /[\s\-().]/g;
/** An invalid entry is echoed back in "Invalid phone numbers: ..."; a pasted novel is cut short. */
const ECHO_MAX = 32;

export function isTemplateCategory(value: unknown): value is TemplateCategory {
  return typeof value === 'string' && (TEMPLATE_CATEGORIES as readonly string[]).includes(value);
}

/**
 * A number as stored: separators and a leading "+" removed. Returns undefined when what is left is not
 * 8 to 15 digits. Integers from a spreadsheet are accepted as their digits.
 */
export function normalizePhoneNumber(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) text = String(value);
  else return undefined;
  const digits = text.trim().replace(PHONE_SEPARATORS, '').replace(/^\+/, '');
  return PHONE_DIGITS.test(digits) ? digits : undefined;
}

/**
 * The form's check when one number is added to a list that is already valid: the message to show, or
 * undefined when the number may be added.
 */
export function phoneNumberToAddError(existing: readonly string[], candidate: unknown): string | undefined {
  const normalized = normalizePhoneNumber(candidate);
  if (normalized === undefined) return MESSAGES.phoneNumberInvalid;
  if (existing.includes(normalized)) return MESSAGES.phoneNumberDuplicate;
  if (existing.length >= LIMITS.templatePhoneNumbersMax) return MESSAGES.phoneNumbersMax;
  return undefined;
}

/**
 * `phone_numbers` as SPEC §3 allows it: an array, or a JSON string holding one. null, undefined and an
 * empty string are an empty list. Returns undefined when the value is neither.
 */
export function parsePhoneNumbers(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return undefined;
  if (value.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function echo(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}…` : text;
}

/**
 * The whole list: at most 200, each 8-15 digits (one bad: "Phone number must be 8-15 digits"; several:
 * "Invalid phone numbers: a, b"), no duplicates. The count is checked first so a huge paste is not
 * echoed back number by number.
 */
export function validatePhoneNumbers(value: unknown): { ok: true; value: string[] } | { ok: false; error: string } {
  const list = parsePhoneNumbers(value);
  if (list === undefined) return { ok: false, error: TEMPLATE_MESSAGES.phoneNumbersNotList };
  if (list.length > LIMITS.templatePhoneNumbersMax) return { ok: false, error: MESSAGES.phoneNumbersMax };
  const numbers: string[] = [];
  const invalid: string[] = [];
  for (const entry of list) {
    const normalized = normalizePhoneNumber(entry);
    if (normalized === undefined) invalid.push(echo(entry));
    else numbers.push(normalized);
  }
  if (invalid.length === 1) return { ok: false, error: MESSAGES.phoneNumberInvalid };
  if (invalid.length > 1) return { ok: false, error: invalidPhoneNumbersMessage(invalid) };
  if (new Set(numbers).size !== numbers.length) return { ok: false, error: MESSAGES.phoneNumberDuplicate };
  return { ok: true, value: numbers };
}

/** Postgres text cannot hold U+0000 (JSON can): it is dropped rather than failing the write. */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}

type FieldCheck<T> = { ok: true; value: T } | { ok: false; error: string };

function checkName(value: unknown): FieldCheck<string> {
  if (value === undefined || value === null) return { ok: false, error: MESSAGES.templateNameRequired };
  if (typeof value !== 'string') return { ok: false, error: TEMPLATE_MESSAGES.nameNotText };
  const name = withoutNul(value).trim();
  if (name === '') return { ok: false, error: MESSAGES.templateNameRequired };
  if (name.length > LIMITS.templateNameMax) return { ok: false, error: MESSAGES.templateNameTooLong };
  return { ok: true, value: name };
}

function checkMessage(value: unknown): FieldCheck<string> {
  if (value === undefined || value === null) return { ok: false, error: MESSAGES.messageContentRequired };
  if (typeof value !== 'string') return { ok: false, error: TEMPLATE_MESSAGES.messageContentNotText };
  // Kept as typed (line breaks and spacing are part of the message); blank counts as missing.
  const message = withoutNul(value);
  if (message.trim() === '') return { ok: false, error: MESSAGES.messageContentRequired };
  if (message.length > LIMITS.templateMessageMax) return { ok: false, error: MESSAGES.messageContentTooLong };
  return { ok: true, value: message };
}

function checkDescription(value: unknown): FieldCheck<string> {
  if (value === undefined || value === null) return { ok: true, value: '' };
  if (typeof value !== 'string') return { ok: false, error: TEMPLATE_MESSAGES.descriptionNotText };
  const description = withoutNul(value).trim();
  if (description.length > LIMITS.templateDescriptionMax) return { ok: false, error: MESSAGES.descriptionTooLong };
  return { ok: true, value: description };
}

function checkCategory(value: unknown): FieldCheck<TemplateCategory> {
  if (value === undefined || value === null || value === '') return { ok: true, value: 'general' };
  return isTemplateCategory(value) ? { ok: true, value } : { ok: false, error: MESSAGES.categoryInvalid };
}

function checkFavorite(value: unknown): FieldCheck<boolean> {
  if (value === undefined || value === null) return { ok: true, value: false };
  return typeof value === 'boolean' ? { ok: true, value } : { ok: false, error: TEMPLATE_MESSAGES.isFavoriteNotBoolean };
}

const CHECKS: { [F in TemplateField]: (value: unknown) => FieldCheck<TemplateInput[F]> } = {
  name: checkName,
  description: checkDescription,
  message_content: checkMessage,
  phone_numbers: validatePhoneNumbers,
  category: checkCategory,
  is_favorite: checkFavorite,
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateFields(body: Record<string, unknown>, fields: readonly TemplateField[]): TemplateValidationResult<Partial<TemplateInput>> {
  const value: Record<string, unknown> = {};
  const errors: TemplateFieldErrors = {};
  for (const field of fields) {
    const check = CHECKS[field](body[field]);
    if (check.ok) value[field] = check.value;
    else errors[field] = check.error;
  }
  if (Object.keys(errors).length > 0) return { ok: false, message: MESSAGES.fixFormErrors, errors };
  return { ok: true, value: value as Partial<TemplateInput> };
}

/**
 * A create: name and message_content required, the rest optional with defaults (description '',
 * phone_numbers [], category general, is_favorite false). Unknown fields are ignored.
 */
export function validateTemplateCreate(body: unknown): TemplateValidationResult<TemplateInput> {
  if (body !== undefined && body !== null && !isPlainObject(body)) {
    return { ok: false, message: TEMPLATE_MESSAGES.bodyNotObject, errors: {} };
  }
  return validateFields(body ?? {}, TEMPLATE_FIELDS) as TemplateValidationResult<TemplateInput>;
}

/**
 * An update, full or partial (e.g. only is_favorite): only the fields present are checked and
 * returned. A field sent as null is reset to its default, except the two required ones.
 */
export function validateTemplateUpdate(body: unknown): TemplateValidationResult<Partial<TemplateInput>> {
  if (body === undefined || body === null) return { ok: true, value: {} };
  if (!isPlainObject(body)) return { ok: false, message: TEMPLATE_MESSAGES.bodyNotObject, errors: {} };
  return validateFields(
    body,
    TEMPLATE_FIELDS.filter((field) => Object.hasOwn(body, field)),
  );
}

/**
 * "<name> (Copy)", the base cut so the whole still fits in 100 characters (never splitting a
 * surrogate pair), so a copy of a 100-character name still validates.
 */
export function duplicateTemplateName(name: string): string {
  let base = name.slice(0, LIMITS.templateNameMax - TEMPLATE_COPY_SUFFIX.length);
  if (base.length > 0 && /[\uD800-\uDBFF]$/.test(base)) base = base.slice(0, -1);
  return `${base.trimEnd()}${TEMPLATE_COPY_SUFFIX}`;
}

/** What a duplicate creates: the same content under "<name> (Copy)", not a favorite, usage 0. */
export function duplicateTemplateInput(source: Pick<Template, keyof TemplateInput>): TemplateInput {
  return {
    name: duplicateTemplateName(source.name),
    description: source.description,
    message_content: source.message_content,
    phone_numbers: [...source.phone_numbers],
    category: source.category,
    is_favorite: false,
  };
}

/** One query value as Express hands it: a string, or an array when the key is repeated. */
function single(value: unknown): string | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return null;
}

/**
 * The list's optional filters (`?category=&is_favorite=true`). An empty value, or category "all", is no
 * filter; is_favorite=true keeps favorites only, is_favorite=false keeps the others. Anything else is a
 * 400, so a typo never silently shows the wrong list.
 */
export function validateTemplateListQuery(query: {
  category?: unknown;
  is_favorite?: unknown;
}): { ok: true; value: TemplateListFilter } | { ok: false; message: string; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const filter: TemplateListFilter = {};
  const category = single(query.category);
  if (category === null) errors.category = MESSAGES.categoryInvalid;
  else if (category !== undefined && category !== '' && category !== 'all') {
    if (isTemplateCategory(category)) filter.category = category;
    else errors.category = MESSAGES.categoryInvalid;
  }
  const favorite = single(query.is_favorite);
  if (favorite === 'true') filter.is_favorite = true;
  else if (favorite === 'false') filter.is_favorite = false;
  else if (favorite !== undefined && favorite !== '') errors.is_favorite = TEMPLATE_MESSAGES.favoriteFilterInvalid;
  const messages = Object.values(errors);
  if (messages.length > 0) return { ok: false, message: messages.join('; '), errors };
  return { ok: true, value: filter };
}

/** The list URL's query string for a filter ('' when none), as the web builds it. */
export function templateListQueryString(filter: TemplateListFilter): string {
  const params = new URLSearchParams();
  if (filter.category) params.set('category', filter.category);
  if (filter.is_favorite !== undefined) params.set('is_favorite', String(filter.is_favorite));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
