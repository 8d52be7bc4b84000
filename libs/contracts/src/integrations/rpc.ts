import type { z } from '../common/schema.js';
import type { MessageMetadata, MessageMetadataPutRequest, MessageMetadataRef } from './v1.js';
import type { IdempotencyBeginReply, IdempotencyBeginRequest, IdempotencyFinishRequest } from './idempotency.js';
import type {
  ApiKey,
  ApiKeyCreated,
  ApiKeyCreateRequestSchema,
  ApiKeyPrincipal,
  ApiKeyRefSchema,
  ApiKeyVerifyRequestSchema,
  IntegrationsUserRequestSchema,
} from './keys.js';
import type {
  DeliveryRefSchema,
  Webhook,
  WebhookCreateRequestSchema,
  WebhookDelivery,
  WebhookRefSchema,
  WebhookUpdateRequestSchema,
  WebhookWithSecret,
} from './webhooks.js';

export type IntegrationsUserRequest = z.output<typeof IntegrationsUserRequestSchema>;
export type ApiKeyCreateRequest = z.output<typeof ApiKeyCreateRequestSchema>;
export type ApiKeyRef = z.output<typeof ApiKeyRefSchema>;
export type ApiKeyVerifyRequest = z.output<typeof ApiKeyVerifyRequestSchema>;
export type WebhookCreateRequest = z.output<typeof WebhookCreateRequestSchema>;
export type WebhookRef = z.output<typeof WebhookRefSchema>;
export type WebhookUpdateRequest = z.output<typeof WebhookUpdateRequestSchema>;
export type DeliveryRef = z.output<typeof DeliveryRefSchema>;

/**
 * Requests the integrations service answers. Every user request carries the acting `userId`; a key,
 * endpoint or delivery of another user is "not found". Bodies travel as the client sent them and are
 * validated by the service with the schemas of keys.ts and webhooks.ts.
 */
export interface IntegrationsRequests {
  /** Refused (409, API_KEY_LIMIT_REACHED) past INTEGRATIONS_LIMITS.apiKeysPerUserMax live keys. */
  'integrations.keys.create': { request: ApiKeyCreateRequest; reply: ApiKeyCreated };
  'integrations.keys.list': { request: IntegrationsUserRequest; reply: { keys: ApiKey[] } };
  'integrations.keys.revoke': { request: ApiKeyRef; reply: { id: string } };
  /** A key by the SHA-256 of its secret: who it acts for (404 when unknown or revoked). Asked by gateways. */
  'integrations.keys.verify': { request: ApiKeyVerifyRequest; reply: ApiKeyPrincipal };
  'integrations.webhooks.create': { request: WebhookCreateRequest; reply: WebhookWithSecret };
  'integrations.webhooks.list': { request: IntegrationsUserRequest; reply: { webhooks: Webhook[] } };
  'integrations.webhooks.update': { request: WebhookUpdateRequest; reply: Webhook };
  'integrations.webhooks.delete': { request: WebhookRef; reply: { id: string } };
  'integrations.webhooks.secret': { request: WebhookRef; reply: WebhookWithSecret };
  /** A new secret; the old one keeps signing beside it for INTEGRATIONS_LIMITS.webhookSecretOverlapMs. */
  'integrations.webhooks.rotate': { request: WebhookRef; reply: WebhookWithSecret };
  /** Queues a `webhook.test` delivery to the endpoint. */
  'integrations.webhooks.test': { request: WebhookRef; reply: { delivery: WebhookDelivery } };
  /** The endpoint's last INTEGRATIONS_LIMITS.deliveriesShown deliveries, newest first. */
  'integrations.webhooks.deliveries': { request: WebhookRef; reply: { deliveries: WebhookDelivery[] } };
  /** Sends a delivery again (same webhook-id), now. */
  'integrations.webhooks.resend': { request: DeliveryRef; reply: { delivery: WebhookDelivery } };
  /** A /v1 message's metadata, stored (again: the same answer) once the message was queued. */
  'integrations.messages.metadata.put': { request: MessageMetadataPutRequest; reply: { stored: true } };
  /** A /v1 message's metadata; null when it was sent without (or is another user's). */
  'integrations.messages.metadata.get': {
    request: MessageMetadataRef;
    reply: { metadata: MessageMetadata | null };
  };
  'integrations.idempotency.begin': { request: IdempotencyBeginRequest; reply: IdempotencyBeginReply };
  'integrations.idempotency.finish': { request: IdempotencyFinishRequest; reply: { stored: true } };
  'integrations.idempotency.release': { request: IdempotencyBeginRequest; reply: { released: true } };
}
