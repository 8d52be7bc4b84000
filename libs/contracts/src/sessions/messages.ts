/** User-facing texts of the sessions module (the web shows them as they are). */
export const SESSION_MESSAGES = {
  /**
   * qr_max_attempts: the web shows the attempts beside it ("(5 attempts)") and MESSAGES.qrMaxAttemptsRefresh
   * beneath it (SPEC §8), so the number is not repeated in the words.
   */
  qrMaxAttempts: 'Maximum QR code attempts reached without a scan',
  creatingInProgress: 'A WhatsApp session is already being created',
  creatingFinalizing: 'QR code scanned, finalizing the WhatsApp session',
  creatingRestoring: 'Restoring your WhatsApp session',
  notLinked: 'WhatsApp is not connected',
  notOnWhatsApp: 'number is not on WhatsApp',
  rateLimited: 'WhatsApp refused the message: this number is sending too fast (rate-overlimit)',
  sendInProgress: 'This message is already being sent',
  noPendingLink: 'No WhatsApp link is waiting for a scan',
  /** requestPairingCode with a number WhatsApp would not take. */
  pairingPhoneInvalid:
    'Enter the phone number of the WhatsApp account with its country code, digits only (8 to 15 digits, e.g. 85291234567)',
  /** requestPairingCode while the account is linked (or a link is being finalised or restored). */
  pairingAlreadyLinked: 'WhatsApp is already connected or being connected',
  /** The simulator's pair call with no code showing. */
  noPendingPairingCode: 'No pairing code is waiting to be entered',
  /** The simulator's pair call with a code that is not the one showing (or has expired). */
  pairingCodeWrong: 'That pairing code is not the one showing, or it has expired',
  /** Codes refreshed the maximum number of times without being entered. */
  pairingCodeMaxCodes: 'The pairing code was not entered in time',
  nothingToDisconnect: 'No WhatsApp session is connected',
  simulatorDisabled: 'Not found',
  wrongShard: 'This WhatsApp session is moving to another server. Please try again shortly.',
  clerkUserIdRequired: 'clerkUserId is required',
  cleanupDone: 'Session cleaned up',
  cleanupNothing: 'No session to clean up',
  cleanupPartial: 'The session was only partly cleaned up',
  cleanupWhatsappLogoutFailed:
    'WhatsApp did not confirm the logout; remove this device under Linked Devices on the phone',
  cleanupStoredLinkFailed: 'The stored link could not be deleted',
  cleanupStoredLoginFailed: 'The stored WhatsApp login could not be deleted',
  createSessionForbidden: 'You can only create a session for your own account',
  createSessionInvalid:
    'createSession needs {clerkUserId} as text, with an optional id and isExplicitRequest (true or false)',
  createSessionFailed: 'Could not reach the WhatsApp service. Please try again.',
  engineFailed: 'WhatsApp could not be started',
  phoneUnlinked: 'The phone unlinked this device',
  loggedOut: 'Logged out',
  authLost: 'The saved WhatsApp login is no longer valid',
  /** Why a link ended, as WhatsApp reported it (the `disconnected` state's message). */
  disconnectConflict:
    'WhatsApp was opened on another computer or browser, so this one was disconnected. Connect again to continue.',
  disconnectBanned:
    'WhatsApp has banned this number. Sending is stopped; contact WhatsApp support before linking it again.',
  disconnectBannedBusiness:
    'WhatsApp has banned this WhatsApp Business number. Sending is stopped; contact WhatsApp support before linking it again.',
  disconnectProxyBlocked: "WhatsApp blocked this server's network address. Sending is stopped; please contact support.",
  disconnectDeprecatedVersion:
    'WhatsApp no longer accepts the version of WhatsApp Web this server runs. Please contact support.',
  disconnectUnpaired: 'The phone unlinked this device. Connect again to continue.',
  /** WhatsApp answered a send with an error (ack -1): the message did not go out. */
  sendRejected: 'WhatsApp refused this message',
  /** WhatsApp accepted a send and then refused it with an error ack (a 463 / reach-out refusal). */
  sendRefusedAfterAccept: 'WhatsApp accepted this message and then refused it; it was not delivered',
  /** WhatsApp's server never acknowledged a send that left this device. */
  sendNotConfirmed: 'WhatsApp did not confirm this message in time; it was not delivered',
  /** The engine failed a send with no verdict of WhatsApp's: nothing went out, the send is tried again. */
  sendFailed: 'the message could not be sent',
  /** WhatsApp did not answer a number lookup in time: nothing was sent, the send is tried again. */
  whatsappSlow: 'WhatsApp did not answer in time',
  /** Sent to the account's own number once per new link when the preference is on. */
  autoLoginSuccess: '✅ Business Notification System: WhatsApp connected successfully. You can now send bulk messages.',
} as const;

/** Reasons carried by `disconnected {reason}`. */
export const DISCONNECT_REASONS = {
  phoneUnlinked: 'phone_unlinked',
  logout: 'logout',
  authLost: 'auth_lost',
  engineFailed: 'engine_failed',
  /** WhatsApp Web opened elsewhere (CONFLICT). */
  conflict: 'conflict',
  /** The number is banned (TOS_BLOCK) — jobs pause sending for this account. */
  banned: 'banned',
  /** The business number is banned (SMB_TOS_BLOCK). */
  bannedBusiness: 'banned_business',
  /** WhatsApp blocked the server's address (PROXYBLOCK). */
  proxyBlocked: 'proxy_blocked',
  /** WhatsApp refuses this WhatsApp Web version (DEPRECATED_VERSION). */
  deprecatedVersion: 'deprecated_version',
} as const;
export type DisconnectReason = (typeof DISCONNECT_REASONS)[keyof typeof DISCONNECT_REASONS];

/**
 * A `disconnected` reason of whatsapp-web.js (a WhatsApp Web socket state, or LOGOUT) → our reason and
 * the plain message for the user. Unknown states are an unlink.
 */
export function whatsappDisconnect(waReason: string): { reason: DisconnectReason; message: string } {
  switch (waReason) {
    case 'CONFLICT':
      return { reason: DISCONNECT_REASONS.conflict, message: SESSION_MESSAGES.disconnectConflict };
    case 'TOS_BLOCK':
      return { reason: DISCONNECT_REASONS.banned, message: SESSION_MESSAGES.disconnectBanned };
    case 'SMB_TOS_BLOCK':
      return { reason: DISCONNECT_REASONS.bannedBusiness, message: SESSION_MESSAGES.disconnectBannedBusiness };
    case 'PROXYBLOCK':
      return { reason: DISCONNECT_REASONS.proxyBlocked, message: SESSION_MESSAGES.disconnectProxyBlocked };
    case 'DEPRECATED_VERSION':
      return { reason: DISCONNECT_REASONS.deprecatedVersion, message: SESSION_MESSAGES.disconnectDeprecatedVersion };
    case 'UNPAIRED':
    case 'UNPAIRED_IDLE':
      return { reason: DISCONNECT_REASONS.phoneUnlinked, message: SESSION_MESSAGES.disconnectUnpaired };
    default:
      return { reason: DISCONNECT_REASONS.phoneUnlinked, message: SESSION_MESSAGES.phoneUnlinked };
  }
}

/** Server → client socket event for a refused or failed createSession (not one of SPEC §7's states). */
export const SESSION_SOCKET_ERROR = 'session_error';

/** A WhatsApp LID as the sessions service keeps it: its digits and `@lid`. */
export const LID_PATTERN = /^\d{6,24}@lid$/;

/** `<digits>@lid` from a LID or its digits; undefined when it is neither. */
export function normalizeLid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const lid = /^\d+$/.test(value) ? `${value}@lid` : value;
  return LID_PATTERN.test(lid) ? lid : undefined;
}

/** Engines behind WA_ENGINE. */
export const WA_ENGINES = ['simulated', 'webjs'] as const;
export type WaEngineName = (typeof WA_ENGINES)[number];

/**
 * Idempotency keys of job sends are `<jobId>:<recipient>`, built and read only here. The recipient
 * never holds a colon, so the last colon splits them even if a job id ever did.
 */
export function idempotencyKeyOf(jobId: string, recipient: string): string {
  return `${jobId}:${recipient}`;
}

export function parseIdempotencyKey(key: string): { jobId: string; recipient: string } | undefined {
  const at = key.lastIndexOf(':');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { jobId: key.slice(0, at), recipient: key.slice(at + 1) };
}
