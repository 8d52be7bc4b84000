import { createHash, createHmac, randomBytes } from 'node:crypto';
import { INTEGRATIONS_LIMITS, WEBHOOK_SECRET_PREFIX } from '@bns/contracts';

/**
 * Standard Webhooks signing: `webhook-signature` is `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`,
 * one per secret in force, separated by spaces (after a rotation the old secret signs too, so a
 * receiver that still holds it keeps verifying). A secret is `whsec_` + base64 of its key bytes.
 */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(INTEGRATIONS_LIMITS.webhookSecretBytes).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    'base64',
  );
}

export function signatureHeader(
  secrets: readonly string[],
  webhookId: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${webhookId}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', keyOf(s)).update(content).digest('base64')}`).join(' ');
}

/** The `webhook-id` of an event's deliveries: the same on every attempt and every redelivery of the event. */
export function webhookIdOf(eventId: string): string {
  return `msg_${createHash('sha256').update(eventId).digest('base64url').slice(0, 27)}`;
}
