import { LIMITS, TEMPLATE_CATEGORIES } from '../common/limits.js';
import { MESSAGES, phoneNumbersNotValidMessage } from '../common/messages.js';
import { normalizePhone } from '../common/phone.js';
import {
  isBlankText,
  ONE_NATS_MESSAGE,
  RpcIdSchema,
  RpcUserIdSchema,
  withoutNul,
  z,
  type HttpCallRule,
} from '../common/schema.js';
import { idempotencyKeySchema } from '../jobs/schemas.js';
import { MediaIdSchema } from '../media/schemas.js';
import { TEMPLATE_MESSAGES } from './messages.js';

/**
 * The template payloads (SPEC §3, §5, §7), each declared once: its type, the form rules the gateway
 * and the templates service both run, and the API documentation come from these schemas. Free-text
 * form fields drop NUL (Postgres text cannot hold it) rather than fail a form over an invisible
 * character; the spec's words are the messages.
 */

/** An invalid entry is echoed back in "Invalid phone numbers: ..."; a pasted novel is cut short. */
const ECHO_MAX = 32;

/**
 * A number as stored: separators and a leading "+" removed. Returns undefined when what is left is not
 * 8 to 15 digits. Integers from a spreadsheet are accepted as their digits. (`normalizePhone(value, 'stored')`.)
 */
export function normalizePhoneNumber(value: unknown): string | undefined {
  return normalizePhone(value, 'stored');
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

/** An entry as the message shows it. Lists and objects are not walked (a JSON string may nest them thousands deep). */
function echo(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : Array.isArray(value)
        ? '[…]'
        : typeof value === 'object' && value !== null
          ? '{…}'
          : String(value);
  return text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}…` : text;
}

/**
 * The whole list: at most 200, each 8-15 digits (one bad: "Phone number must be 8-15 digits. Invalid phone
 * numbers: a"; several: "Invalid phone numbers: a, b"), no duplicates. The count is checked first so a huge paste is not
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
  if (invalid.length > 0) return { ok: false, error: phoneNumbersNotValidMessage(invalid) };
  if (new Set(numbers).size !== numbers.length) return { ok: false, error: MESSAGES.phoneNumberDuplicate };
  return { ok: true, value: numbers };
}

const missing = (input: unknown) => input === undefined || input === null;

const NameSchema = z
  .string({ error: (i) => (missing(i.input) ? MESSAGES.templateNameRequired : TEMPLATE_MESSAGES.nameNotText) })
  .transform((v) => withoutNul(v).trim())
  // A name of only invisible characters (U+200B, U+2060, U+FEFF, …) would show as an empty card title.
  .pipe(
    z
      .string()
      .min(1, MESSAGES.templateNameRequired)
      .refine((v) => !isBlankText(v), MESSAGES.templateNameRequired)
      .max(LIMITS.templateNameMax, MESSAGES.templateNameTooLong),
  )
  .meta({ maxLength: LIMITS.templateNameMax, example: 'Weekly promo' });

// Kept as typed (line breaks and spacing are part of the message); blank (also invisible-only) counts as missing.
const MessageContentSchema = z
  .string({
    error: (i) => (missing(i.input) ? MESSAGES.messageContentRequired : TEMPLATE_MESSAGES.messageContentNotText),
  })
  .transform((v) => withoutNul(v))
  .pipe(
    z
      .string()
      .refine((v) => !isBlankText(v), MESSAGES.messageContentRequired)
      .refine((v) => v.length <= LIMITS.templateMessageMax, MESSAGES.messageContentTooLong),
  )
  .meta({ maxLength: LIMITS.templateMessageMax, example: 'Hello! *20% off* this week only.' });

const DescriptionSchema = z
  .string({ error: TEMPLATE_MESSAGES.descriptionNotText })
  .nullish()
  .transform((v) => (v == null ? '' : withoutNul(v).trim()))
  .pipe(z.string().max(LIMITS.templateDescriptionMax, MESSAGES.descriptionTooLong))
  .meta({ maxLength: LIMITS.templateDescriptionMax, example: 'Sent every Monday' });

const PhoneNumbersSchema = z
  .union([z.array(z.union([z.string(), z.number()])), z.string(), z.null()])
  .optional()
  .meta({
    description: `Up to ${LIMITS.templatePhoneNumbersMax} numbers of ${LIMITS.templatePhoneMinDigits}-${LIMITS.templatePhoneMaxDigits} digits, no duplicates; an array or a JSON string of one`,
    example: ['85212345678', '85287654321'],
  });

/** The list rule runs on whatever was sent (a non-list answers the list message, not a type error). */
const PhoneNumbersRule = z
  .unknown()
  .optional()
  .transform((value, ctx) => {
    const checked = validatePhoneNumbers(value);
    if (!checked.ok) {
      ctx.addIssue({ code: 'custom', message: checked.error });
      return z.NEVER;
    }
    return checked.value;
  });

const CategorySchema = z
  .union([z.enum(TEMPLATE_CATEGORIES), z.literal(''), z.null()], { error: MESSAGES.categoryInvalid })
  .optional()
  .transform((v) => v || 'general')
  .meta({ default: 'general' });

const FavoriteSchema = z
  .boolean({ error: TEMPLATE_MESSAGES.isFavoriteNotBoolean })
  .nullish()
  .transform((v) => v ?? false)
  .meta({ default: false });

/**
 * The template's attachment (sent with the message as its caption), or null for none. Whether the user
 * has it is checked by the templates service before anything else (404); here only its form.
 */
const TemplateMediaIdSchema = MediaIdSchema.nullish().transform((v) => v ?? null);

const FIELDS = {
  name: NameSchema,
  description: DescriptionSchema,
  message_content: MessageContentSchema,
  phone_numbers: PhoneNumbersRule.meta(openApiOverride(PhoneNumbersSchema)),
  category: CategorySchema,
  is_favorite: FavoriteSchema,
  mediaId: TemplateMediaIdSchema,
};

/** Documents a rule that checks `unknown` by the shape it accepts. */
function openApiOverride(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}

/** A body that is not an object (null and absent count as an empty form). */
const formBody = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === undefined || v === null ? {} : v), schema);

/**
 * POST /api/templates/{userId} and `templates.create`: name and message_content required, the rest
 * optional with defaults (description '', phone_numbers [], category general, is_favorite false).
 * Unknown fields are ignored.
 */
export const TemplateCreateSchema = formBody(z.object(FIELDS, { error: TEMPLATE_MESSAGES.bodyNotObject }));

/**
 * PUT /api/templates/{userId}/{templateId} and `templates.update`, full or partial (e.g. only
 * is_favorite): only the fields present are checked and returned. A field sent as null is reset to
 * its default, except the two required ones.
 */
export const TemplateUpdateSchema = formBody(z.object(FIELDS, { error: TEMPLATE_MESSAGES.bodyNotObject }).partial());

/**
 * The list's optional filters (`?category=&is_favorite=true`). An empty value, or category "all", is no
 * filter; is_favorite=true keeps favorites only, is_favorite=false keeps the others (a boolean is
 * accepted too, as a NATS request carries it). Anything else — a repeated key included — is a 400,
 * so a typo never silently shows the wrong list.
 */
export const TemplateListQuerySchema = z.object({
  category: z
    .union([z.enum(TEMPLATE_CATEGORIES), z.literal(''), z.literal('all')], { error: MESSAGES.categoryInvalid })
    .optional()
    .transform((v) => (v === '' || v === 'all' ? undefined : v))
    .meta({ description: 'Empty or "all": every category' }),
  is_favorite: z
    .union([z.enum(['true', 'false', '']), z.boolean()], { error: TEMPLATE_MESSAGES.favoriteFilterInvalid })
    .optional()
    .transform((v) => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined))
    .meta({ description: 'true: favorites only; false: the others' }),
});

/** A template as the API answers it (SPEC §3). Field names are the spec's, snake_case. */
export const TemplateSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  message_content: z.string(),
  phone_numbers: z.array(z.string()),
  category: z.enum(TEMPLATE_CATEGORIES),
  is_favorite: z.boolean(),
  usage_count: z.int(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  mediaId: z
    .string()
    .optional()
    .meta({ description: 'The attachment sent with the message (GET /api/media/{id}); absent when none' }),
});

export const TemplateStatsSchema = z.object({
  total_templates: z.int(),
  favorite_templates: z.int(),
  categories: z.int().meta({ description: 'How many distinct categories the templates use' }),
  total_usage: z.int(),
});

/** One entry of GET /api/templates/{userId}/categories. */
export const TemplateCategoryCountSchema = z.object({ category: z.enum(TEMPLATE_CATEGORIES), count: z.int() });

/** HTTP answers of the templates calls. */
export const TEMPLATE_HTTP = {
  create: ONE_NATS_MESSAGE,
  update: ONE_NATS_MESSAGE,
} as const satisfies Record<string, HttpCallRule>;

export const TemplateAnswerSchema = z.object({ success: z.literal(true), template: TemplateSchema });
export const TemplateListAnswerSchema = z.object({
  success: z.literal(true),
  templates: z.array(TemplateSchema).meta({ description: 'Newest first' }),
});
export const TemplateCategoriesAnswerSchema = z.object({
  success: z.literal(true),
  categories: z
    .array(TemplateCategoryCountSchema)
    .meta({ description: 'Every category, in the spec order, with its count' }),
});
export const TemplateStatsAnswerSchema = z.object({ success: z.literal(true), stats: TemplateStatsSchema });

// ---- NATS requests: the envelope the templates service checks before a handler runs. Bodies and
// query values travel as the client sent them (`unknown`): the service checks them with the form rules
// above, so a form error keeps its own code and words.

/** `templates.categories`, `templates.stats`: the acting user only. */
export const TemplateUserRequestSchema = z.object({ userId: RpcUserIdSchema });
/** `templates.list`: optional filters, checked by the service with `TemplateListQuerySchema`. */
export const TemplateListRequestSchema = z.object({
  userId: RpcUserIdSchema,
  category: z.unknown().optional(),
  is_favorite: z.unknown().optional(),
});
/** `templates.delete`, `.duplicate`, `.use`: one of the user's templates (another user's is "not found"). */
export const TemplateRefSchema = z.object({ userId: RpcUserIdSchema, templateId: RpcIdSchema });
/** `templates.create`: `body` is checked by the service with `TemplateCreateSchema`. */
export const TemplateCreateRequestSchema = z.object({
  userId: RpcUserIdSchema,
  body: z.unknown().optional(),
  /** The client's `Idempotency-Key` (checked by the gateway): a retry answers the template the first try stored. */
  idempotencyKey: idempotencyKeySchema.optional(),
});
/** `templates.update`: `body` is checked by the service with `TemplateUpdateSchema`. */
export const TemplateUpdateRequestSchema = TemplateRefSchema.extend({ body: z.unknown().optional() });
