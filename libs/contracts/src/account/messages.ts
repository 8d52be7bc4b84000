import { ACCOUNT_LIMITS } from './limits.js';

/** What the account-and-data calls say, in plain words (shown by the web). */
export const ACCOUNT_MESSAGES = {
  emailRequired: 'Type your e-mail address to confirm',
  emailMismatch: 'That e-mail is not the one of this account',
  emailUnknown:
    'This sign-in does not carry an e-mail address to confirm with: sign in again, or ask the operator to add the email claim to session tokens',
  noDeletion: 'No account deletion was requested',
  retentionInvalid: 'days must be 30, 90, 365 or null (keep until deleted)',
  deletionRunning: 'This account is being deleted',
  /** A campaign whose message text and per-recipient results the retention purge removed (its counts stay). */
  detailsPurged: (days: number) => `Details removed after ${days} days`,
  takeoutRunning: 'A download of your data is already being prepared: wait for it to finish, then try again',
  auditKindInvalid: 'kind must be one of the audit log kinds (for example auth.signed_in)',
  auditCursorInvalid: 'cursor must be the nextCursor of a previous page',
  auditLimitInvalid: `limit must be a whole number from 1 to ${ACCOUNT_LIMITS.auditPageMax}`,
} as const;
