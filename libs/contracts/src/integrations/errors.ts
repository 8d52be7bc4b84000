/** Codes of the integrations service's refusals (the gateway maps their kinds to HTTP in one place). */
export enum IntegrationsErrorCode {
  InvalidKey = 'API_KEY_INVALID',
  KeyNotFound = 'API_KEY_NOT_FOUND',
  KeyLimitReached = 'API_KEY_LIMIT_REACHED',
  InvalidWebhook = 'WEBHOOK_INVALID',
  WebhookUrlRefused = 'WEBHOOK_URL_REFUSED',
  WebhookNotFound = 'WEBHOOK_NOT_FOUND',
  WebhookLimitReached = 'WEBHOOK_LIMIT_REACHED',
  DeliveryNotFound = 'WEBHOOK_DELIVERY_NOT_FOUND',
  IdempotencyConflict = 'IDEMPOTENCY_KEY_REUSED',
  IdempotencyInProgress = 'IDEMPOTENCY_KEY_IN_PROGRESS',
}
