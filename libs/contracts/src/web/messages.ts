/**
 * Texts the web shows that the spec does not give word for word (timeouts, the send-screen file import,
 * the sign-out outcome). The spec's own texts are in MESSAGES (common/messages.ts).
 */
export const WEB_MESSAGES = {
  sessionCheckTimedOut: 'Checking for an existing session timed out. Connect WhatsApp to continue.',
  connectTimedOut: 'Connecting timed out. Please try again.',
  whatsappConnected: 'WhatsApp connected',
  whatsappDisconnected: 'WhatsApp disconnected. Connect again to keep sending.',
  keepAlive: 'Keep-alive: WhatsApp session is active',
  sessionCreating: 'Session is being created…',
  monitoringStopped: 'Stopped monitoring the job because of connection errors; refresh the page to check its status.',
  jobAccepted: 'Job accepted',
  cleanupPartial: 'Signed out, but not every WhatsApp session could be cleaned up.',
  cleanupFailed: 'Signed out, but the WhatsApp session could not be cleaned up.',
  signedOut: 'Signed out',
  sessionExpired: 'Your session has expired. Please sign in again.',
  fileNoRows: 'The file has no rows',
  fileNoPhoneColumn: 'Choose the column that holds the phone numbers',
  fileUnsupported: 'Use a .csv or .xlsx file',
  fileUnreadable: 'The file could not be read',
  rowMissingPhone: 'Missing phone number',
  rowInvalidPhone: 'Phone number must be exactly 8 digits (Hong Kong)',
  rowDuplicatePhone: 'Duplicate phone number (merged with an earlier row)',
  placeholderMissing: 'Missing value for',
  templateSaved: 'Template saved',
  templateDeleted: 'Template deleted',
  templateDuplicated: 'Template duplicated',
  templateLoaded: 'Template loaded into the sender',
  preferencesSaved: 'Settings saved',
  preferencesFailed: 'Failed to save settings',
  numbersAdded: 'Phone numbers added',
} as const;

/** The e-mail the landing page and the header's support note give (SPEC §2 "Get in Touch"). */
export const CONTACT_EMAIL = 'support@business-notification.app';
