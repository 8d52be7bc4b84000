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
  /** The same key is being sent right now (retryable, kind conflict). */
  SendInProgress = 'SEND_IN_PROGRESS',
  /** Dev simulator calls while WA_ENGINE is not `simulated` (kind not found). */
  SimulatorDisabled = 'SIMULATOR_DISABLED',
  /** Simulator scan with no QR showing (kind conflict). */
  NoPendingLink = 'NO_PENDING_LINK',
  /** Simulator disconnect with no linked phone (kind conflict). */
  NothingToDisconnect = 'NOTHING_TO_DISCONNECT',
  InvalidRequest = 'SESSIONS_INVALID_REQUEST',
  /** A request reached a shard that does not own the user (a resize in progress; kind unavailable, retry). */
  WrongShard = 'SESSIONS_WRONG_SHARD',
}

/** Dev-only simulator calls (WA_ENGINE=simulated). */
export interface SimulatorScanReply {
  sessionId: string;
  phoneNumber: string;
}
export interface SimulatorOutboxMessage {
  to: string;
  text: string;
  idempotencyKey: string;
  at: string;
}
export interface SimulatorOutboxReply {
  messages: SimulatorOutboxMessage[];
}

/** Logical keys; on the wire they are `sessions.<shard>.<verb>`. */
export interface SessionsRequests {
  'sessions.connect': { request: SessionConnectRequest; reply: SessionStatusReply };
  'sessions.status': { request: { userId: string }; reply: SessionStatusReply };
  'sessions.send': { request: SessionSendRequest; reply: SessionSendReply };
  'sessions.logout': { request: { userId: string }; reply: { sessionsCleanedUp: number } };
  'sessions.simulator.scan': { request: { userId: string }; reply: SimulatorScanReply };
  'sessions.simulator.disconnect': { request: { userId: string }; reply: { disconnected: true } };
  'sessions.simulator.outbox': { request: { userId: string }; reply: SimulatorOutboxReply };
}
