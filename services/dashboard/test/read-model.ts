import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  EVENTS_STREAM,
  type EventOf,
  type MessageReceivedEvent,
  type MessageStatus,
  type MessageStatusEvent,
  type SessionStateEvent,
} from '@bns/contracts';
import { EventBus } from '@bns/service-kit';
import { waitFor } from '@bns/testing';

/** The dashboard's durable consumers, as the service names them by default. */
export const DURABLES = [
  'dashboard-events-message-status',
  'dashboard-events-session-state',
  'dashboard-events-message-received',
  'dashboard-events-job-progress',
];

/** What the jobs service publishes for one recipient (and sessions for its acks): same key, same content. */
export function messageEvent(
  userId: string,
  jobId: string,
  recipient: string,
  status: MessageStatus,
  extra: Partial<MessageStatusEvent> = {},
): MessageStatusEvent {
  return {
    eventId: randomUUID(),
    userId,
    at: new Date().toISOString(),
    jobId,
    idempotencyKey: `${jobId}:${recipient}`,
    recipient,
    status,
    content: `Hello ${recipient}, your order is ready`,
    ...(status === 'failed' ? { error: 'Number is not on WhatsApp' } : {}),
    ...extra,
  };
}

export function sessionEvent(
  userId: string,
  state: SessionStateEvent['state'],
  extra: Partial<SessionStateEvent> = {},
): SessionStateEvent {
  return { eventId: randomUUID(), userId, at: new Date().toISOString(), state, ...extra };
}

/** What the sessions service publishes when the linked phone receives a message. */
export function receivedEvent(
  userId: string,
  from: string,
  text: string,
  extra: Partial<MessageReceivedEvent> = {},
): MessageReceivedEvent {
  return {
    eventId: randomUUID(),
    userId,
    at: new Date().toISOString(),
    from,
    text,
    messageId: `false_${from}@c.us_${randomUUID()}`,
    ...extra,
  };
}

export class Producer {
  readonly bus: EventBus;
  constructor(readonly nc: NatsConnection) {
    this.bus = new EventBus(nc);
  }

  message(e: MessageStatusEvent): Promise<void> {
    return this.bus.emit('events.message.status', e);
  }

  session(e: SessionStateEvent): Promise<void> {
    return this.bus.emit('events.session.state', e);
  }

  received(e: MessageReceivedEvent): Promise<void> {
    return this.bus.emit('events.message.received', e);
  }

  /**
   * Stores the event in the stream again without the JetStream message id, as happens when a producer
   * retries after the stream's duplicate window: only the dashboard's own dedupe stands in the way.
   */
  async republishRaw<K extends 'events.message.status' | 'events.message.received'>(
    subject: K,
    e: EventOf<K>,
  ): Promise<number> {
    const ack = await jetstream(this.nc).publish(subject, JSON.stringify(e));
    return ack.seq;
  }

  /** Until every consumer of the read model has applied and acked all the stream holds. */
  async waitApplied(timeoutMs = 5000): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    await waitFor(
      async () => {
        for (const d of DURABLES) {
          const info = await jsm.consumers.info(EVENTS_STREAM, d);
          if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
        }
        return true;
      },
      timeoutMs,
      100,
      'the dashboard to apply every event',
    );
  }
}
