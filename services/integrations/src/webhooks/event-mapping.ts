import { EVENT_SCHEMAS, type EventKey, type EventOf, type JobStatus, type WebhookEventType } from '@bns/contracts';

/** An internal event as webhooks see it: who, when, its id, and what it becomes. */
export interface SourceEvent {
  eventId: string;
  userId: string;
  at: string;
  /** A webhook event known from the event alone. */
  webhook?: { type: WebhookEventType; data: Record<string, unknown> };
  /** A campaign's status: which webhook (if any) depends on the status seen before (`campaignTransition`). */
  campaign?: { jobId: string; status: JobStatus; progress: Record<string, unknown> };
}

const MESSAGE_TYPES: Partial<Record<string, WebhookEventType>> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  read: 'message.read',
  failed: 'message.failed',
};

/**
 * What an event of `events.>` means for webhooks; a string names the problem of one that is malformed
 * (the field, never a value); undefined when webhooks have nothing to do with it.
 */
export function sourceEventOf(subject: string, body: unknown): SourceEvent | string | undefined {
  if (!(subject in EVENT_SCHEMAS)) return undefined;
  const parsed = EVENT_SCHEMAS[subject as EventKey].safeParse(body);
  if (!parsed.success) return `${subject}: ${parsed.error.issues[0]?.path.join('.') || 'body'} is not valid`;
  const base = { eventId: parsed.data.eventId, userId: parsed.data.userId, at: parsed.data.at };
  switch (subject as EventKey) {
    case 'events.message.status': {
      const e = parsed.data as EventOf<'events.message.status'>;
      const type = MESSAGE_TYPES[e.status];
      if (!type) return undefined;
      return {
        ...base,
        webhook: {
          type,
          data: {
            campaignId: e.jobId,
            to: e.recipient,
            status: e.status,
            at: e.at,
            ...(e.error ? { reason: e.error } : {}),
          },
        },
      };
    }
    case 'events.message.received': {
      const e = parsed.data as EventOf<'events.message.received'>;
      return { ...base, webhook: { type: 'message.received', data: { from: e.from, text: e.text, at: e.at } } };
    }
    case 'events.session.state': {
      const e = parsed.data as EventOf<'events.session.state'>;
      if (e.state === 'ready')
        return {
          ...base,
          webhook: {
            type: 'session.connected',
            data: { at: e.at, ...(e.phoneNumber ? { phoneNumber: e.phoneNumber } : {}) },
          },
        };
      if (e.state === 'disconnected')
        return {
          ...base,
          webhook: { type: 'session.disconnected', data: { at: e.at, ...(e.waReason ? { reason: e.waReason } : {}) } },
        };
      return undefined;
    }
    case 'events.job.progress': {
      const e = parsed.data as EventOf<'events.job.progress'>;
      return { ...base, campaign: { jobId: e.jobId, status: e.status, progress: e.progress } };
    }
    default:
      return undefined;
  }
}

/** The campaign webhook a status change makes (undefined when the status did not move, or moved nowhere worth telling). */
export function campaignTransition(previous: JobStatus | undefined, next: JobStatus): WebhookEventType | undefined {
  if (previous === next) return undefined;
  switch (next) {
    case 'running':
      return previous === 'paused' ? 'campaign.resumed' : 'campaign.started';
    case 'paused':
      return 'campaign.paused';
    case 'completed':
      return 'campaign.completed';
    case 'cancelled':
      return 'campaign.cancelled';
    default:
      return undefined;
  }
}
