import type { SessionState } from './types.js';

export interface SessionConnectRequest {
  userId: string;
  explicit: boolean;
}
export interface SessionStatusReply {
  state: SessionState;
  sessionId?: string;
  phoneNumber?: string;
}

/**
 * Send one message from the user's linked account. The idempotency key (`<jobId>:<recipient>`) makes
 * a retry safe: a key that was already sent answers the first result and sends nothing.
 * Failures are typed errors: `SessionsErrorCode.NotLinked` (retryable, kind conflict) and
 * `SessionsErrorCode.NotOnWhatsApp` (permanent, kind validation).
 */
export interface SessionSendRequest {
  userId: string;
  to: string;
  text: string;
  idempotencyKey: string;
}
export interface SessionSendReply {
  messageId: string;
  status: 'sent';
  at: string;
  /** True when this key had been sent before and nothing new was sent. */
  duplicate: boolean;
}

export enum SessionsErrorCode {
  NotLinked = 'SESSION_NOT_LINKED',
  NotOnWhatsApp = 'NOT_ON_WHATSAPP',
  SendFailed = 'SEND_FAILED',
}

/** Logical keys; on the wire they are `sessions.<shard>.<verb>`. */
export interface SessionsRequests {
  'sessions.connect': { request: SessionConnectRequest; reply: SessionStatusReply };
  'sessions.status': { request: { userId: string }; reply: SessionStatusReply };
  'sessions.send': { request: SessionSendRequest; reply: SessionSendReply };
  'sessions.logout': { request: { userId: string }; reply: { sessionsCleanedUp: number } };
}
