/** Error codes of the templates module (the `code` of an error answer). */
export enum TemplatesErrorCode {
  /** A create or update body broke a form rule; `errors` maps each field to its message. */
  InvalidTemplate = 'TEMPLATE_INVALID',
  /** A list query value is not a category or not true/false. */
  InvalidFilter = 'TEMPLATE_FILTER_INVALID',
  /** No template with that id belongs to the caller (another user's id answers the same). */
  NotFound = 'TEMPLATE_NOT_FOUND',
  /** A create or duplicate when the user already keeps LIMITS.templatesPerUserMax templates (409). */
  LimitReached = 'TEMPLATE_LIMIT_REACHED',
  /** The `Idempotency-Key` header of a create is not 1–200 printable characters. */
  IdempotencyKeyInvalid = 'TEMPLATE_IDEMPOTENCY_KEY_INVALID',
}
