import { LIMITS, TEMPLATE_CATEGORIES, type TemplateCategory } from '../common/limits.js';
import { MESSAGES } from '../common/messages.js';
import { checkWith } from '../common/schema.js';
import { TEMPLATE_MESSAGES } from './messages.js';
import { TemplateCreateSchema, TemplateListQuerySchema, TemplateUpdateSchema } from './schemas.js';
export { normalizePhoneNumber, parsePhoneNumbers, phoneNumberToAddError, validatePhoneNumbers } from './schemas.js';
import type { Template, TemplateFieldErrors, TemplateInput, TemplateListFilter } from './types.js';

/**
 * The template form rules of SPEC §5, shared by the templates service (authoritative), the gateway and
 * the web form (same words on both sides): thin wrappers over the schemas in schemas.ts. Pure
 * functions over untrusted JSON: nothing here throws on odd input.
 */

export type TemplateValidationResult<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      /** What a 400 puts in `error`: "Please fix the form errors" unless the body is not a form at all. */
      message: string;
      errors: TemplateFieldErrors;
    };

export const TEMPLATE_COPY_SUFFIX = ' (Copy)';

export function isTemplateCategory(value: unknown): value is TemplateCategory {
  return typeof value === 'string' && (TEMPLATE_CATEGORIES as readonly string[]).includes(value);
}

function formResult<T>(checked: ReturnType<typeof checkWith>): TemplateValidationResult<T> {
  if (checked.ok) return { ok: true, value: checked.value as T };
  // The body itself (not a field) is wrong: it is not a form at all.
  if (checked.field === '') return { ok: false, message: TEMPLATE_MESSAGES.bodyNotObject, errors: {} };
  return { ok: false, message: MESSAGES.fixFormErrors, errors: checked.errors as TemplateFieldErrors };
}

/**
 * A create: name and message_content required, the rest optional with defaults (description '',
 * phone_numbers [], category general, is_favorite false). Unknown fields are ignored.
 */
export function validateTemplateCreate(body: unknown): TemplateValidationResult<TemplateInput> {
  return formResult(checkWith(TemplateCreateSchema, body));
}

/**
 * An update, full or partial (e.g. only is_favorite): only the fields present are checked and
 * returned. A field sent as null is reset to its default, except the two required ones.
 */
export function validateTemplateUpdate(body: unknown): TemplateValidationResult<Partial<TemplateInput>> {
  return formResult(checkWith(TemplateUpdateSchema, body));
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
    mediaId: source.mediaId ?? null,
  };
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
  const checked = checkWith(TemplateListQuerySchema, { category: query.category, is_favorite: query.is_favorite });
  if (!checked.ok) return { ok: false, message: Object.values(checked.errors).join('; '), errors: checked.errors };
  const filter: TemplateListFilter = {};
  if (checked.value.category !== undefined) filter.category = checked.value.category;
  if (checked.value.is_favorite !== undefined) filter.is_favorite = checked.value.is_favorite;
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
