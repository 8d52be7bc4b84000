import { isUuid, normalizeHkPhone, SESSION_MESSAGES } from '@bns/contracts';

/** What one message event says for the contact book and the inbox. */
export type Fact =
  | {
      kind: 'sent' | 'delivered' | 'read' | 'failed';
      userId: string;
      phone: string;
      at: Date;
      /** The send's own key (idempotency key): the inbox's row for it. */
      key: string;
      jobId?: string;
      text: string;
      notOnWhatsApp: boolean;
    }
  | { kind: 'replied'; userId: string; phone: string; at: Date; key: string; text: string };

/** A message event as a fact, or undefined when it says nothing for the book (or is malformed). */
export function factOf(subject: string, body: unknown): Fact | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = body as Record<string, unknown>;
  if (typeof e.userId !== 'string' || typeof e.at !== 'string') return undefined;
  const at = new Date(e.at);
  if (Number.isNaN(at.getTime())) return undefined;
  if (subject === 'events.message.status') {
    const status = e.status;
    if (status !== 'sent' && status !== 'delivered' && status !== 'read' && status !== 'failed') return undefined;
    const phone = normalizeHkPhone(e.recipient);
    if (!phone || typeof e.idempotencyKey !== 'string') return undefined;
    return {
      kind: status,
      userId: e.userId,
      phone,
      at,
      key: `out:${e.idempotencyKey}`,
      ...(isUuid(e.jobId) ? { jobId: e.jobId } : {}),
      text: typeof e.content === 'string' ? e.content : '',
      notOnWhatsApp: status === 'failed' && e.error === SESSION_MESSAGES.notOnWhatsApp,
    };
  }
  if (subject === 'events.message.received') {
    const from = typeof e.from === 'string' ? e.from.replace(/@c\.us$/, '') : undefined;
    const phone = normalizeHkPhone(from);
    if (!phone || typeof e.messageId !== 'string') return undefined;
    return {
      kind: 'replied',
      userId: e.userId,
      phone,
      at,
      key: `in:${e.messageId}`,
      text: typeof e.text === 'string' ? e.text : '',
    };
  }
  return undefined;
}
