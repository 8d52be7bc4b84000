import type { z } from '../common/schema.js';
import type { MediaKind } from '../media/limits.js';
import type {
  PairingCodeRequestSchema,
  SimulatorPairRequestSchema,
  SessionConnectRequestSchema,
  SessionSendRequestSchema,
  SessionUserRequestSchema,
  SimulatorInboundRequestSchema,
} from './schemas.js';
import type { SessionState } from './types.js';

export type SessionConnectRequest = z.output<typeof SessionConnectRequestSchema>;
/** A request that names only the acting user. */
export type SessionUserRequest = z.output<typeof SessionUserRequestSchema>;
export interface SessionStatusReply {
  state: SessionState;
  sessionId?: string;
  phoneNumber?: string;
}

/**
 * Send one message from the user's linked account (schema and rules: `SessionSendRequestSchema`).
 * Failures are typed errors: `SessionsErrorCode.NotLinked` (retryable, kind conflict) and
 * `SessionsErrorCode.NotOnWhatsApp` (permanent, kind validation).
 */
export type SessionSendRequest = z.output<typeof SessionSendRequestSchema>;
export interface SessionSendReply {
  messageId: string;
  status: 'sent';
  at: string;
  /** True when this key had been sent before and nothing new was sent. */
  duplicate: boolean;
  /**
   * True when WhatsApp may have taken the message but did not confirm it (no result, or the send timed
   * out after it was handed over): it is never sent again for this key, and `messageId` is empty.
   */
  unconfirmed?: boolean;
}

export enum SessionsErrorCode {
  NotLinked = 'SESSION_NOT_LINKED',
  NotOnWhatsApp = 'NOT_ON_WHATSAPP',
  SendFailed = 'SEND_FAILED',
  /** WhatsApp answered the send with an error (ack -1): permanent, kind validation. */
  SendRejected = 'SEND_REJECTED',
  /** WhatsApp pushed back (rate-overlimit): the account must slow down (kind rate_limited, retry later). */
  RateLimited = 'WHATSAPP_RATE_LIMITED',
  /** The same key is being sent right now (retryable, kind conflict). */
  SendInProgress = 'SEND_IN_PROGRESS',
  /** Dev simulator calls while WA_ENGINE is not `simulated` (kind not found). */
  SimulatorDisabled = 'SIMULATOR_DISABLED',
  /** Simulator scan with no QR showing (kind conflict). */
  NoPendingLink = 'NO_PENDING_LINK',
  /** requestPairingCode with a number WhatsApp would not take (kind validation). */
  PairingPhoneInvalid = 'PAIRING_PHONE_INVALID',
  /** requestPairingCode while linked or being linked without a code (kind conflict). */
  PairingAlreadyLinked = 'PAIRING_ALREADY_LINKED',
  /** Simulator pair with no code showing, or another code (kind conflict). */
  NoPendingPairingCode = 'NO_PENDING_PAIRING_CODE',
  PairingCodeWrong = 'PAIRING_CODE_WRONG',
  /** Simulator disconnect with no linked phone (kind conflict). */
  NothingToDisconnect = 'NOTHING_TO_DISCONNECT',
  InvalidRequest = 'SESSIONS_INVALID_REQUEST',
  /** A request reached a shard that does not own the user (a resize in progress; kind unavailable, retry). */
  WrongShard = 'SESSIONS_WRONG_SHARD',
}

/**
 * `sessions.pairing.request`: link by phone number. Starts a link when there is none (no createSession
 * needed) or turns the QR showing into a code; the code itself comes as the `pairing_code` state
 * (`code`, `expiresAt`), refreshed until it is entered, cancelled or too many went by.
 */
export type PairingCodeRequest = z.output<typeof PairingCodeRequestSchema>;
export interface PairingCodeReply {
  sessionId: string;
}
/** `sessions.pairing.cancel`: back to the QR code. */
export interface PairingCancelReply {
  cancelled: boolean;
}
export type SimulatorPairRequest = z.output<typeof SimulatorPairRequestSchema>;

/** Dev-only simulator calls (WA_ENGINE=simulated). */
export interface SimulatorScanReply {
  sessionId: string;
  phoneNumber: string;
}
/** The attachment a simulated message carried, as the phone saw it (never the bytes). */
export interface SimulatorOutboxMedia {
  kind: MediaKind;
  sha256: string;
  size: number;
  fileName: string;
}
export interface SimulatorOutboxMessage {
  to: string;
  /** The recipient's LID on the simulated WhatsApp (`<digits>@lid`). */
  lid: string;
  /** The message, or the attachment's caption. */
  text: string;
  idempotencyKey: string;
  at: string;
  media?: SimulatorOutboxMedia;
}
export interface SimulatorOutboxReply {
  messages: SimulatorOutboxMessage[];
}
/**
 * The simulated phone receives a message from `from` (8 to 15 digits; 8-digit numbers get 852), or
 * from `lid` alone (`<digits>@lid` or its digits: no number, as WhatsApp sends more and more), optionally
 * answering one of our messages (`quotedMessageId`).
 */
export type SimulatorInboundRequest = z.output<typeof SimulatorInboundRequestSchema>;
export interface SimulatorInboundReply {
  messageId: string;
  at: string;
}

/** A step of the sign-out cleanup that did not complete (the rest still ran). */
export interface CleanupFailure {
  step: CleanupStep;
  message: string;
}
export type CleanupStep = 'whatsapp_logout' | 'stored_link' | 'stored_login';

/**
 * `sessions.logout`: `sessionsCleanedUp` counts the sessions whose every cleanup step succeeded;
 * `failures` (absent when none) names the steps that did not, so a partial cleanup is never reported
 * as a full one.
 */
export interface SessionLogoutReply {
  sessionsCleanedUp: number;
  failures?: CleanupFailure[];
}

/** Logical keys; on the wire they are `sessions.<shard>.<verb>`. */
export interface SessionsRequests {
  'sessions.connect': { request: SessionConnectRequest; reply: SessionStatusReply };
  'sessions.status': { request: SessionUserRequest; reply: SessionStatusReply };
  'sessions.send': { request: SessionSendRequest; reply: SessionSendReply };
  'sessions.logout': { request: SessionUserRequest; reply: SessionLogoutReply };
  'sessions.pairing.request': { request: PairingCodeRequest; reply: PairingCodeReply };
  'sessions.pairing.cancel': { request: SessionUserRequest; reply: PairingCancelReply };
  'sessions.simulator.scan': { request: SessionUserRequest; reply: SimulatorScanReply };
  'sessions.simulator.pair': { request: SimulatorPairRequest; reply: SimulatorScanReply };
  'sessions.simulator.disconnect': { request: SessionUserRequest; reply: { disconnected: true } };
  'sessions.simulator.outbox': { request: SessionUserRequest; reply: SimulatorOutboxReply };
  'sessions.simulator.inbound': { request: SimulatorInboundRequest; reply: SimulatorInboundReply };
}
