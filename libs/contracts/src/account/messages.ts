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
  retentionLabel: 'Keep message details for',
  retentionHint:
    "Message text, variables and each recipient's result of finished campaigns; the counts, monthly usage and opt-outs stay.",
  retentionSaved: 'Saved',
  retentionForever: 'Until I delete them',
  takeoutButton: 'Download my data',
  takeoutPreparing: 'Preparing your data…',
  auditTitle: 'Audit log',
  auditEmpty: 'Nothing recorded yet.',
  deleteTitle: 'Delete account',
  deleteWarning:
    'This deletes your templates, campaigns and their results, opt-outs, contacts, API keys, webhooks and settings, and logs WhatsApp out. It cannot be undone.',
  deleteConfirmLabel: 'Type your e-mail address to confirm',
  deleteButton: 'Delete account',
  deletionProgress: 'Deleting your account…',
  deletionDone: 'Your account and all its data are deleted.',
  auditKindInvalid: 'kind must be one of the audit log kinds (for example auth.signed_in)',
  auditCursorInvalid: 'cursor must be the nextCursor of a previous page',
  auditLimitInvalid: `limit must be a whole number from 1 to ${ACCOUNT_LIMITS.auditPageMax}`,
} as const;
