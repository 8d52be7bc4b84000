import { RpcIdSchema, RpcUserIdSchema, hasNul, z } from '../common/schema.js';
import { INTEGRATIONS_LIMITS as L } from './limits.js';
import { INTEGRATIONS_MESSAGES as M } from './messages.js';

/** Every event an endpoint can subscribe to (the payload's `type`). */
export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.skipped',
  'message.received',
  'contact.opted_out',
  'campaign.started',
  'campaign.paused',
  'campaign.resumed',
  'campaign.completed',
  'campaign.cancelled',
  'session.connected',
  'session.disconnected',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The event `POST /api/webhooks/{id}/test` sends (not subscribable). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** The body of every webhook (Standard Webhooks' payload shape). */
export interface WebhookPayload {
  type: WebhookEventType | typeof WEBHOOK_TEST_EVENT;
  timestamp: string;
  data: Record<string, unknown>;
}

const urlField = z
  .string({ error: M.webhookUrlRequired })
  .transform((s) => s.trim())
  .refine((s) => s !== '', M.webhookUrlRequired)
  .refine((s) => s.length <= L.webhookUrlMax, M.webhookUrlTooLong)
  .refine((s) => !hasNul(s), M.webhookUrlInvalid)
  .meta({ example: 'https://example.com/hooks/bns', format: 'uri' });

const eventsField = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: M.webhookEventUnknown }), { error: M.webhookEventsRequired })
  .min(1, M.webhookEventsRequired)
  .max(WEBHOOK_EVENT_TYPES.length * 2, M.webhookEventUnknown)
  .transform((e) => [...new Set(e)])
  .meta({ example: ['message.delivered', 'message.read', 'message.received'] });

/** `POST /api/webhooks` `{url, events}`. Whether the URL's address is allowed is the service's to judge. */
export const WebhookCreateSchema = z.object({
  url: urlField,
  events: eventsField,
  description: z
    .string()
    .max(L.webhookDescriptionMax, M.webhookDescriptionTooLong)
    .refine((s) => !hasNul(s), M.webhookDescriptionTooLong)
    .optional(),
});
export type WebhookCreate = z.output<typeof WebhookCreateSchema>;
/** `PATCH /api/webhooks/{id}`: enable/disable, change events or URL. */
export const WebhookUpdateSchema = z.object({
  url: urlField.optional(),
  events: eventsField.optional(),
  enabled: z.boolean({ error: M.webhookEnabledNotBoolean }).optional(),
});
export type WebhookUpdate = z.output<typeof WebhookUpdateSchema>;

export const WEBHOOK_DISABLED_REASONS = ['user', 'failing'] as const;
export const WebhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: z.string(),
  enabled: z.boolean(),
  /** `failing`: disabled after 5 days of failed deliveries (the tab shows a notice). */
  disabledReason: z.enum(WEBHOOK_DISABLED_REASONS).nullable(),
  /** Since when every delivery failed; null while the last one succeeded. */
  failingSince: z.iso.datetime().nullable(),
  /** Until when the previous secret's signature is still sent beside the current one (after a rotation). */
  previousSecretExpiresAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});
export type Webhook = z.output<typeof WebhookSchema>;
/** A create and a rotation answer the signing secret (`whsec_…`). */
export const WebhookWithSecretSchema = WebhookSchema.extend({ secret: z.string() });
export type WebhookWithSecret = z.output<typeof WebhookWithSecretSchema>;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** One delivery as the tab lists it: what happened, never the payload (it may hold personal data). */
export const WebhookDeliverySchema = z.object({
  id: z.string(),
  /** The `webhook-id` header: the same on every attempt of this delivery. */
  webhookId: z.string(),
  eventType: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.int(),
  /** The last attempt's HTTP status; null when it got no answer (refused, timed out). */
  httpStatus: z.int().nullable(),
  /** Why the last attempt failed, in plain words, without the endpoint's answer. */
  error: z.string().nullable(),
  latencyMs: z.int().nullable(),
  createdAt: z.iso.datetime(),
  lastAttemptAt: z.iso.datetime().nullable(),
  nextAttemptAt: z.iso.datetime().nullable(),
});
export type WebhookDelivery = z.output<typeof WebhookDeliverySchema>;

// ---- NATS requests ----
export const WebhookCreateRequestSchema = z.object({ userId: RpcUserIdSchema, body: z.unknown().optional() });
export const WebhookRefSchema = z.object({ userId: RpcUserIdSchema, webhookId: RpcIdSchema });
export const WebhookUpdateRequestSchema = WebhookRefSchema.extend({ body: z.unknown().optional() });
export const DeliveryRefSchema = WebhookRefSchema.extend({ deliveryId: RpcIdSchema });
