import { z } from 'zod';
import { LIMITS } from './limits.js';

/**
 * The one schema library of the contracts: every payload is a zod schema, and from it come the
 * TypeScript type (`z.infer`), the validation the gateway and the owning service run (`checkWith`),
 * and the OpenAPI document of the gateway (`openApiSchemaOf`). Services and the web import these
 * helpers from here and never zod itself, so the whole workspace runs one zod.
 */
export { z };

// In a browser, zod must not compile validators with `new Function`: the gateway's Content-Security-Policy
// has no 'unsafe-eval', and even zod's probe for it is reported as a violation. Servers keep the JIT.
if (typeof document !== 'undefined') z.config({ jitless: true });
export type Schema<Out = unknown> = z.ZodType<Out>;
export type Infer<S extends z.ZodType> = z.output<S>;

/** Texts of the request plumbing (the parser, the size rule, text rules shared by every field). */
export const REQUEST_MESSAGES = {
  invalidJson: 'The request body is not valid JSON',
  tooDeep: `The request body is nested too deeply (at most ${LIMITS.jsonMaxDepth} levels of arrays and objects)`,
  bodyNotObject: 'The request body must be a JSON object',
  bodyNotJson: 'The request body must be JSON, sent with Content-Type: application/json',
  bodyNotUtf8: 'The request body must be UTF-8 text',
  charsetUnsupported: 'The request body must be JSON in UTF-8 (charset=utf-8)',
  encodingUnsupported:
    "The request body's Content-Encoding is not supported: send it as it is, or with gzip or deflate",
  badRequest: 'Bad request',
  /** A NUL character (U+0000) cannot be stored or sent: refused where silently changing the text would be wrong. */
  nulCharacter: (field: string) => `${field} must not contain the NUL character (U+0000)`,
  /** Half of a UTF-16 surrogate pair alone: it has no character, and would go out as "�". */
  invalidText: (field: string) => `${field} contains characters that are not valid text`,
  clientIdInvalid: `clientId must be text of at most ${LIMITS.clientIdMaxLength} characters`,
  // A NATS request refused by its owning service before a handler runs (`checkRequest`). Each names the
  // field (a name from the schema, never a value: values may be phone numbers).
  requestNotObject: 'The request must be an object',
  fieldRequired: (field: string) => `${field} is required`,
  fieldNotOfType: (field: string, expected: string) => `${field} must be ${expected}`,
  fieldEmpty: (field: string) => `${field} must not be empty`,
  fieldTooLong: (field: string, max: number | bigint) => `${field} must be at most ${max} characters`,
  fieldTooMany: (field: string, max: number | bigint) => `${field} must have at most ${max} entries`,
  fieldInvalid: (field: string) => `${field} is not valid`,
} as const;

export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/** A lone UTF-16 surrogate: JSON can carry it (`"\ud800"`), UTF-8 and Postgres cannot. */
export function hasLoneSurrogate(text: string): boolean {
  return /\p{Cs}/u.test(text);
}

/**
 * Characters that show nothing: white space, control characters, the zero-width and other
 * default-ignorable code points (U+200B–U+200F, U+2060–U+206F, U+FEFF, variation selectors, tags,
 * Hangul fillers…) and the blank braille pattern U+2800, a common "invisible message" trick.
 */
const INVISIBLE_ONLY = /^[\s\p{Cc}\p{Default_Ignorable_Code_Point}\u2800]*$/u;

/** True when the text would show nothing at all: a message or value of only such characters is blank. */
export function isBlankText(text: string): boolean {
  // Most text starts with a printable ASCII character: not blank, without the Unicode-aware pattern.
  const first = text.charCodeAt(0);
  if (first > 0x20 && first < 0x7f) return false;
  return INVISIBLE_ONLY.test(text);
}

/** Postgres text cannot hold U+0000 (JSON can): where a form strips it, this is how. */
export function withoutNul(text: string): string {
  return hasNul(text) ? text.replaceAll('\u0000', '') : text;
}

/** The outcome of a check: the value, or the message a 400 says with field → message. */
export type SchemaCheck<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      message: string;
      /** Field (dotted path) → its first message. */
      errors: Record<string, string>;
      /** The first issue's field ('' for the body itself). */
      field: string;
    };

function pathOf(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join('.');
}

/**
 * Validates `value` against `schema`. On failure the message is the first issue's (fields are checked
 * in the order the schema declares them, so that order is the order of precedence), and `errors` holds
 * the first message of each field.
 */
/** First problem of a zod refusal, as the one message a 400 shows. */
export function firstIssue(error: z.ZodError, fallback: string = REQUEST_MESSAGES.badRequest): string {
  return error.issues[0]?.message ?? fallback;
}

export function checkWith<S extends z.ZodType>(schema: S, value: unknown): SchemaCheck<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const errors: Record<string, string> = {};
  const wording = (issue: z.core.$ZodIssue) =>
    ZOD_DEFAULT_WORDING.test(issue.message)
      ? plainIssueMessage(issue, value, REQUEST_MESSAGES.bodyNotObject)
      : issue.message;
  for (const issue of result.error.issues) {
    const key = pathOf(issue);
    if (!(key in errors)) errors[key] = wording(issue);
  }
  const first = result.error.issues[0]!;
  return { ok: false, message: wording(first), errors, field: pathOf(first) };
}

/** zod's own wording of an issue (a schema without words of its own for it): never shown as it is. */
const ZOD_DEFAULT_WORDING =
  /^(Invalid input|Invalid option|Invalid (string|number|key|element|union|date)\b|Too (big|small):|Unrecognized keys?:|Invalid$)/;

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

/** Field names come from the schema; a path through a record could hold a sender's key, so it is cut short. */
export const ISSUE_FIELD_MAX = 64;

/** The value at `path` (only to tell "absent" from "wrong"; never put in a message). */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * One issue in our words: the field's name and what is wrong, never zod's text, never the value;
 * `root` when the whole input is wrong (not an object).
 */
export function plainIssueMessage(issue: z.core.$ZodIssue, input: unknown, root: string): string {
  const field = issue.path.map(String).join('.').slice(0, ISSUE_FIELD_MAX);
  if (field === '') return root;
  switch (issue.code) {
    case 'invalid_type':
      return valueAt(input, issue.path) === undefined
        ? REQUEST_MESSAGES.fieldRequired(field)
        : REQUEST_MESSAGES.fieldNotOfType(field, EXPECTED[issue.expected] ?? 'valid');
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array'
        ? REQUEST_MESSAGES.fieldEmpty(field)
        : REQUEST_MESSAGES.fieldInvalid(field);
    case 'too_big':
      if (issue.origin === 'string') return REQUEST_MESSAGES.fieldTooLong(field, issue.maximum);
      if (issue.origin === 'array') return REQUEST_MESSAGES.fieldTooMany(field, issue.maximum);
      return REQUEST_MESSAGES.fieldInvalid(field);
    default:
      return REQUEST_MESSAGES.fieldInvalid(field);
  }
}

/**
 * The schema as OpenAPI 3.0 (what @nestjs/swagger documents): the input side, since that is what a
 * client sends. Transforms document their input; limits that only a transform checks are given with
 * `.meta()` next to the check.
 */
export function openApiSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}

/** Text that must not carry NUL, refused with the field's name. */
export function text(field: string, options: { required: string; notText: string }) {
  return z
    .string({
      error: (issue) => (issue.input === undefined || issue.input === null ? options.required : options.notText),
    })
    .refine((v) => !hasNul(v), { message: REQUEST_MESSAGES.nulCharacter(field), abort: true });
}

/**
 * The socket id a start request may name (SPEC §7 `clientId`): text, bounded, no NUL. It only ever
 * names a socket, so nothing longer than `LIMITS.clientIdMaxLength` is a real one.
 */
export const ClientIdSchema = z
  .string({ error: REQUEST_MESSAGES.clientIdInvalid })
  .max(LIMITS.clientIdMaxLength, { error: REQUEST_MESSAGES.clientIdInvalid })
  .refine((v) => !hasNul(v), { message: REQUEST_MESSAGES.nulCharacter('clientId') })
  .meta({ description: 'The socket id of the tab that started the job (optional)' });

/** The acting user named in a body (SPEC §7 `clerkUserId`); the gateway checks it is the token's subject. */
export const ClerkUserIdSchema = z
  .string({ error: 'clerkUserId must be text' })
  .min(1, { error: 'clerkUserId must be text' })
  .max(LIMITS.userIdMaxLength, { error: 'clerkUserId must be text' })
  .meta({ description: "The signed-in user's id (must be the token's subject)" });

/** The acting user of a NATS request (the token's subject, set by the gateway): non-empty, bounded text. */
export const RpcUserIdSchema = z.string().min(1).max(LIMITS.userIdMaxLength);

/** An id a NATS request names (job, template, inbox…): non-empty, bounded text; the owner checks it is one of its own. */
export const RpcIdSchema = z.string().min(1).max(LIMITS.rpcIdMaxLength);

/** `<service>.ping`: nothing to say; an object so every request has one. */
export const PingRequestSchema = z.object({ at: z.string().max(64).optional() });

/**
 * What an HTTP call accepts, declared next to its schemas: the body's largest size in bytes (the
 * gateway answers 413 above it, before anything crosses NATS). Data, so a call that stages its input
 * (the bulk start, later) can declare a bigger one.
 */
export interface HttpCallRule {
  maxBodyBytes: number;
}

/** The default size rule: what fits in one NATS message with room for the envelope around the body. */
export const ONE_NATS_MESSAGE: HttpCallRule = { maxBodyBytes: LIMITS.natsMaxPayloadBytes - LIMITS.natsEnvelopeBytes };
