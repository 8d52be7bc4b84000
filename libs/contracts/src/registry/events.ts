import {
  MessageReceivedEventSchema,
  MessageStatusEventSchema,
  SessionStateEventSchema,
  type EventEnvelope,
  type MessageReceivedEvent,
  type MessageStatusEvent,
  type SessionStateEvent,
} from '../common/events.js';
import { JobLogEventSchema, JobProgressEventSchema, type JobLogEvent, type JobProgressEvent } from '../jobs/events.js';
import { UserDeletionReceiptEventSchema, UserDeletionRequestedEventSchema } from '../account/schemas.js';
import type { UserDeletionReceiptEvent, UserDeletionRequestedEvent } from '../account/types.js';
import { AuditRecordedEventSchema, type AuditRecordedEvent } from '../account/audit.js';

/** Each event subject's payload schema: a consumer checks what it receives with the same schema. */
export const EVENT_SCHEMAS = {
  'events.session.state': SessionStateEventSchema,
  'events.message.status': MessageStatusEventSchema,
  'events.message.received': MessageReceivedEventSchema,
  'events.job.progress': JobProgressEventSchema,
  'events.job.log': JobLogEventSchema,
  'events.user.deletion.requested': UserDeletionRequestedEventSchema,
  'events.user.deletion.receipt': UserDeletionReceiptEventSchema,
  'events.audit.recorded': AuditRecordedEventSchema,
} as const;

export interface EventMap {
  'events.session.state': SessionStateEvent;
  'events.message.status': MessageStatusEvent;
  'events.message.received': MessageReceivedEvent;
  'events.job.progress': JobProgressEvent;
  'events.job.log': JobLogEvent;
  'events.user.deletion.requested': UserDeletionRequestedEvent;
  'events.user.deletion.receipt': UserDeletionReceiptEvent;
  'events.audit.recorded': AuditRecordedEvent;
}
export type EventKey = keyof EventMap;
export type EventOf<K extends EventKey> = EventMap[K];

export interface EventTransport {
  publish(subject: EventKey, event: EventEnvelope): Promise<void>;
}

/** Typed publish: the event's shape is tied to its subject. */
export function publish<K extends EventKey>(transport: EventTransport, key: K, event: EventOf<K>): Promise<void> {
  return transport.publish(key, event);
}
