/**
 * Texts the web shows that the spec does not give word for word (timeouts, the send-screen file import,
 * the sign-out outcome). The spec's own texts are in MESSAGES (common/messages.ts).
 */
export const WEB_MESSAGES = {
  sessionCheckTimedOut: 'Checking for an existing session timed out. Connect WhatsApp to continue.',
  connectTimedOut: 'Connecting timed out. Please try again.',
  whatsappConnected: 'WhatsApp connected',
  // A part of the page failed to draw: the rest stays, the jobs on the server go on.
  viewCrashed: 'This part of the page stopped working. Your jobs keep running on the server.',
  viewReload: 'Reload this part',
  whatsappDisconnected: 'WhatsApp disconnected. Connect again to keep sending.',
  keepAlive: 'Keep-alive: WhatsApp session is active',
  sessionCreating: 'Session is being created…',
  monitoringStopped:
    'Stopped monitoring the job because of connection errors; use Resume monitoring to follow it again.',
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

  // Dev-only phone controls of the simulated WhatsApp engine (never shown with a real engine)
  simulatorNote: 'Dev only: WhatsApp is simulated here, no phone is needed.',
  simulateScan: 'Simulate scan',
  simulateUnlink: 'Simulate unlink',
  simulateReply: 'Simulate a reply',
  simulateReplyFrom: 'From (8 digits)',
  simulateReplyText: 'Reply text',
  simulateReplySent: 'Simulated reply delivered',
  simulatorFailed: 'The simulated phone did not answer',
  simulatePair: 'Simulate entering the code',

  // Linking by phone number (a pairing code instead of the QR)
  linkWithPhone: 'Link with phone number instead',
  pairingPhoneLabel: 'Phone number of your WhatsApp account, with the country code',
  pairingGetCode: 'Get code',
  pairingRequesting: 'Getting a code from WhatsApp…',
  pairingTitle: 'Enter this code on your phone',
  pairingSteps: [
    'Open WhatsApp on your phone',
    'Tap Menu or Settings, then Linked devices',
    'Tap Link a device',
    'Tap Link with phone number instead',
    'Enter the code shown here',
  ],
  pairingCodeLabel: 'Pairing code',
  pairingExpires: (at: string, left: string) => `A new code replaces this one at ${at} (in ${left})`,
  pairingCancel: 'Cancel',

  // Monitoring that stopped while the server may still be sending (SPEC §4.5, §4.6)
  monitoringStoppedNotice:
    'Progress is no longer being followed, and the job may still be sending. Go Back is available once it has ended.',
  resumeMonitoring: 'Resume monitoring',
  monitoringResumed: 'Monitoring resumed',
  goBackWhileActive: 'Go Back is available once the job has ended',

  // The one connection banner: what is true about the link to the server
  connectionLive: 'Live: progress and replies update as they happen',
  connectionConnecting: 'Connecting to the server…',
  connectionReconnecting: 'Reconnecting… counts shown may be behind until the connection is back',
  connectionOffline: (since: string) =>
    `Offline since ${since}: counts shown may be behind; they update when the connection is back`,
  connectionRestoredBanner: 'Connection restored: progress is up to date again',
  // A job waiting for the phone: nothing resumes until the user links WhatsApp again
  pausedUnlinked: 'Paused — WhatsApp is not linked',
  pausedUnlinkedHint: 'Sending goes on by itself once you link WhatsApp again.',
  linkWhatsApp: 'Link WhatsApp',

  // Templates
  useWhileSending: 'Use is available once the current send has finished',
  allCategories: 'All categories',

  // Uploaded files with blank cells
  rowsMissingValuesTitle: 'Rows with missing values',
  rowsMissingValuesHint:
    'These recipients have no value for a placeholder in the message. Send to the others, or fill in a default value.',
  typedNumber: 'typed',
  sendToOthers: (n: number) => `Send to the other ${n}`,
  fillDefaultLabel: 'Default value',
  fillDefault: 'Fill in the default',
  missingValuesFilled: (n: number) => `Default value filled in for ${n} recipient${n === 1 ? '' : 's'}`,
  missingValuesDropped: (n: number) => `${n} recipient${n === 1 ? '' : 's'} without values removed`,

  // The readiness checklist's check of a personalised message (Start Sending waits for it)
  checkVariables: 'Every {{variable}} has a value',
  /** "{{name}} missing in 4 rows" / "{{name}}, {{shop}} missing in 1 row". */
  checkVariablesMissing: (names: readonly string[], rows: number) =>
    `${names.map((n) => `{{${n}}}`).join(', ')} missing in ${rows.toLocaleString('en-US')} ${rows === 1 ? 'row' : 'rows'}`,
  /** A template's Use whose message has placeholders its numbers have no values for. */
  templateNeedsValues: (names: readonly string[]) =>
    `This template uses ${names.map((n) => `{{${n}}}`).join(', ')}, and its numbers have no values for ${names.length === 1 ? 'it' : 'them'}. Load it into the sender and add a file with ${names.length === 1 ? 'a column' : 'columns'} for ${names.length === 1 ? 'it' : 'them'}.`,
  openInSender: 'Load into the sender',
  sendBlockedMissingValues: 'Every {{variable}} needs a value before sending',

  // Estimates from the server's pacing
  estimateUnknown: 'being calculated…',

  // Donations (the link shows only when DONATION_URL is configured)
  donationFooter: 'Find this tool useful? It is free to use: please consider a donation to keep it running.',
  donationLink: 'Donate',
  donationPrompt: 'This tool is free. If it saved you time, a small donation keeps it running for everyone.',
} as const;

/**
 * The default e-mail the landing page and the header's support note give (SPEC §2 "Get in Touch");
 * a deployment sets its own with SUPPORT_EMAIL (served by GET /api/config).
 */
export const CONTACT_EMAIL = 'support@business-notification.app';

/** The navigation's newer tabs (Campaigns, Contacts, Inbox, Settings): reachable with or without a linked phone. */
export const SETTINGS_MESSAGES = {
  notLinked: 'Not linked.',
  linkInSend: 'Link it in Send Messages',
  reportsData: 'Each campaign’s report (every recipient, its status, replies) can be exported as CSV or XLSX from',
  optOutsData: 'The numbers that opted out can be listed, searched and removed in',
  signOutData: 'Signing out unlinks WhatsApp from this tool and ends the session on this device.',
  campaignsNeedLink: 'History and reports need no phone. To send a campaign again, link WhatsApp in Send Messages.',
  contactsSoon:
    'Your customers in one list, with their names and tags, to pick from when you send. Until then, add numbers in Send Messages or from a CSV/XLSX file.',
  inboxSoon: 'Read and answer your customers’ replies here. Until then, replies are counted in each campaign’s report.',
} as const;
