import type { SessionState } from '../sessions/types.js';
import type { JobStatus, JobProgress } from '../jobs/types.js';

/** JetStream stream that holds every event (`events.>`). */
export const EVENTS_STREAM = 'EVENTS';
export const EVENTS_WILDCARD = 'events.>';

/** Every event carries who it is about and an id consumers dedupe on. */
export interface EventEnvelope {
  eventId: string;
  userId: string;
  /** ISO time the event happened. */
  at: string;
}

export interface SessionStateEvent extends EventEnvelope {
  state: SessionState;
  sessionId?: string;
  qr?: string;
  attempts?: number;
  phoneNumber?: string;
  message?: string;
  reason?: string;
}

export type MessageStatus = 'pending' | 'sent' | 'failed' | 'delivered' | 'read';
/** Forward order of a message's life; a status never moves backwards (failed is terminal beside sent). */
export const MESSAGE_STATUS_RANK: Record<MessageStatus, number> = { pending: 0, failed: 1, sent: 1, delivered: 2, read: 3 };

export interface MessageStatusEvent extends EventEnvelope {
  jobId: string;
  messageId?: string;
  idempotencyKey: string;
  recipient: string;
  status: MessageStatus;
  content: string;
  error?: string;
}

export interface JobProgressEvent extends EventEnvelope {
  jobId: string;
  status: JobStatus;
  progress: JobProgress;
  nextSendAt?: string | null;
}

export type JobLogType = 'info' | 'success' | 'warning' | 'error';
export interface JobLogEvent extends EventEnvelope {
  jobId: string;
  type: JobLogType;
  message: string;
  timestamp: string;
}

export interface EventMap {
  'events.session.state': SessionStateEvent;
  'events.message.status': MessageStatusEvent;
  'events.job.progress': JobProgressEvent;
  'events.job.log': JobLogEvent;
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

/** Socket.io event names the gateway emits to a user's room (SPEC §7 names, plus job events). */
export const SOCKET_EVENTS = {
  qr: 'qr',
  qrMaxAttempts: 'qr_max_attempts',
  ready: 'ready',
  exist: 'exist',
  creating: 'creating',
  noSession: 'no_session',
  disconnected: 'disconnected',
  jobProgress: 'job_progress',
  jobLog: 'job_log',
  messageStatus: 'message_status',
} as const;

/** Client → server socket events (SPEC §7). */
export const SOCKET_CLIENT_EVENTS = {
  connected: 'connected',
  createSession: 'createSession',
} as const;

/** Socket.io room of one user: every replica of the gateway joins sockets by the same name. */
export function userRoom(userId: string): string {
  return `user:${userId}`;
}
