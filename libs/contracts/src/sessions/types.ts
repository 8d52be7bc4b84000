/** States of a user's WhatsApp link as the sessions service reports them (SPEC §4, DESIGN §3). */
export const SESSION_STATES = [
  'qr',
  'qr_max_attempts',
  'ready',
  'exist',
  'creating',
  'no_session',
  'disconnected',
  /** Linking by phone number: an 8-character code to enter on the phone (`code`, `expiresAt`). */
  'pairing_code',
] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/** SPEC §3: digits 3 to 11 of the phone number are shown as the connected number. */
export function displayedPhoneDigits(phoneNumber: string): string {
  return phoneNumber.slice(3, 11);
}
