import { LIMITS } from '../common/limits.js';

/** User-facing texts of the sessions module (the web shows them as they are). */
export const SESSION_MESSAGES = {
  /** qr_max_attempts: the web adds MESSAGES.qrMaxAttemptsRefresh beneath it (SPEC §8). */
  qrMaxAttempts: `Maximum QR code attempts (${LIMITS.qrMaxAttempts}) reached without a scan`,
  creatingInProgress: 'A WhatsApp session is already being created',
  creatingFinalizing: 'QR code scanned, finalizing the WhatsApp session',
  creatingRestoring: 'Restoring your WhatsApp session',
  notLinked: 'WhatsApp is not connected',
  notOnWhatsApp: 'number is not on WhatsApp',
  sendInProgress: 'This message is already being sent',
  noPendingLink: 'No WhatsApp link is waiting for a scan',
  nothingToDisconnect: 'No WhatsApp session is connected',
  simulatorDisabled: 'Not found',
  wrongShard: 'This WhatsApp session is moving to another server. Please try again shortly.',
  clerkUserIdRequired: 'clerkUserId is required',
  cleanupDone: 'Session cleaned up',
  cleanupNothing: 'No session to clean up',
  createSessionForbidden: 'You can only create a session for your own account',
  createSessionFailed: 'Could not reach the WhatsApp service. Please try again.',
  engineFailed: 'WhatsApp could not be started',
  phoneUnlinked: 'The phone unlinked this device',
  loggedOut: 'Logged out',
  authLost: 'The saved WhatsApp login is no longer valid',
  /** Sent to the account's own number once per new link when the preference is on. */
  autoLoginSuccess: '✅ Business Notification System: WhatsApp connected successfully. You can now send bulk messages.',
} as const;

/** Reasons carried by `disconnected {reason}`. */
export const DISCONNECT_REASONS = {
  phoneUnlinked: 'phone_unlinked',
  logout: 'logout',
  authLost: 'auth_lost',
  engineFailed: 'engine_failed',
} as const;
export type DisconnectReason = (typeof DISCONNECT_REASONS)[keyof typeof DISCONNECT_REASONS];

/** Server → client socket event for a refused or failed createSession (not one of SPEC §7's states). */
export const SESSION_SOCKET_ERROR = 'session_error';
export interface SessionSocketError {
  code: string;
  message: string;
}

/** Engines behind WA_ENGINE. */
export const WA_ENGINES = ['simulated', 'webjs'] as const;
export type WaEngineName = (typeof WA_ENGINES)[number];

/**
 * Idempotency keys of job sends are `<jobId>:<recipient>`. The recipient never holds a colon, so the
 * last colon splits them even if a job id ever did.
 */
export function parseIdempotencyKey(key: string): { jobId: string; recipient: string } | undefined {
  const at = key.lastIndexOf(':');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { jobId: key.slice(0, at), recipient: key.slice(at + 1) };
}
