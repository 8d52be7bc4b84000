import { SESSION_STATES } from '../sessions/types.js';
import { z } from './schema.js';

/** JetStream stream that holds every event (`events.>`). */
export const EVENTS_STREAM = 'EVENTS';
export const EVENTS_WILDCARD = 'events.>';

/** Every event carries who it is about and an id consumers dedupe on. */
export const EventEnvelopeSchema = z.object({
  eventId: z.string(),
  userId: z.string(),
  /** ISO time the event happened. */
  at: z.string(),
});
export type EventEnvelope = z.output<typeof EventEnvelopeSchema>;

export const SessionStateEventSchema = EventEnvelopeSchema.extend({
  state: z.enum(SESSION_STATES),
  sessionId: z.string().optional(),
  qr: z.string().optional(),
  attempts: z.int().optional(),
  phoneNumber: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  /** `disconnected` only: WhatsApp's own reason (LOGOUT, CONFLICT, TOS_BLOCK, …) when it gave one. */
  waReason: z.string().optional(),
  /** `pairing_code` only: the code to enter on the phone (8 characters) and when it stops working (ISO). */
  code: z.string().optional(),
  expiresAt: z.string().optional(),
});
export type SessionStateEvent = z.output<typeof SessionStateEventSchema>;

export const MESSAGE_STATUSES = ['pending', 'sent', 'failed', 'delivered', 'read'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
/** Forward order of a message's life; a status never moves backwards (failed is terminal beside sent). */
export const MESSAGE_STATUS_RANK: Record<MessageStatus, number> = {
  pending: 0,
  failed: 1,
  sent: 1,
  delivered: 2,
  read: 3,
};

export const MessageStatusEventSchema = EventEnvelopeSchema.extend({
  jobId: z.string(),
  messageId: z.string().optional(),
  idempotencyKey: z.string(),
  recipient: z.string(),
  status: z.enum(MESSAGE_STATUSES),
  content: z.string(),
  error: z.string().optional(),
  /**
   * `failed` only: WhatsApp accepted the send (it was reported `sent`) and refused it afterwards (an
   * error ack, or no server ack in time). The recipient is failed, not sent; `error` says why.
   */
  refused: z.boolean().optional(),
  /** The recipient's LID (`<digits>@lid`) when WhatsApp gave one with the receipt. */
  lid: z.string().optional(),
});
export type MessageStatusEvent = z.output<typeof MessageStatusEventSchema>;

/**
 * A message a recipient wrote to the user's linked account (one-to-one chats only: no groups, no status
 * broadcasts, never our own messages). `from` is the sender's number in international digits
 * (e.g. 85291234567): WhatsApp's, or found by the sessions service from the sender's LID (its LID ↔ number
 * table, or the message it answers); '' when only a LID is known, never a guess. `text` is personal
 * data: consumers store it only where the product shows it.
 */
export const MessageReceivedEventSchema = EventEnvelopeSchema.extend({
  from: z.string(),
  /** The sender's LID (`<digits>@lid`) when WhatsApp gave one. */
  lid: z.string().optional(),
  /** WhatsApp's id of our message this one answers (quotes), when it does. */
  quotedMessageId: z.string().optional(),
  text: z.string(),
  /** WhatsApp's id of the message (the event id is derived from it, so a redelivery is one event). */
  messageId: z.string(),
});
export type MessageReceivedEvent = z.output<typeof MessageReceivedEventSchema>;

/** Kinds of a job log line (its event is jobs' `events.job.log`). */
export const JOB_LOG_TYPES = ['info', 'success', 'warning', 'error'] as const;
export type JobLogType = (typeof JOB_LOG_TYPES)[number];

/** Socket.io room of one user: every replica of the gateway joins sockets by the same name. */
export function userRoom(userId: string): string {
  return `user:${userId}`;
}
