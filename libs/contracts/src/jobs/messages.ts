import { LIMITS } from '../common/limits.js';
import { MESSAGES } from '../common/messages.js';
import { SESSION_MESSAGES } from '../sessions/messages.js';
import { OPT_OUT_LIMITS, RESULTS_LIMITS } from './limits.js';
import { IDEMPOTENCY_KEY_HEADER } from './subjects.js';
import { EXPORT_FORMATS, RECIPIENT_RESULT_STATUSES, type SkipReason } from './types.js';

/** Rows or numbers echoed back in one message before "and N more". */
export const ECHO_LIST_MAX = 10;

function listWithMore(items: readonly (string | number)[], total: number): string {
  const shown = items.slice(0, ECHO_LIST_MAX).join(', ');
  return total > ECHO_LIST_MAX ? `${shown} and ${total - ECHO_LIST_MAX} more` : shown;
}

/** "row 3", "rows 2, 5". */
function rowsText(rows: readonly number[]): string {
  return `${rows.length === 1 ? 'row' : 'rows'} ${listWithMore(rows, rows.length)}`;
}

/** "10 minutes", "1 minute", "30 seconds". */
export function durationText(ms: number): string {
  const [n, unit] = ms >= 60_000 ? [Math.round(ms / 60_000), 'minute'] : [Math.max(1, Math.round(ms / 1000)), 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * Texts of the jobs module: the start rules' answers (the spec's own words from MESSAGES where it has
 * them) and the job log lines the Activity Log shows.
 */
export const JOB_MESSAGES = {
  enterMessageFirst: MESSAGES.enterMessageFirst,
  addPhoneNumbersFirst: MESSAGES.addPhoneNumbersFirst,
  messageTooLong: `Message must be ${LIMITS.messageMaxLength} characters or less`,
  phoneNumbersNotAList: 'phoneNumbers must be a list of phone numbers',
  recipientsNotAList: 'recipients must be a list of {phone, variables}',
  phoneNumbersAndRecipients: 'Send either phoneNumbers or recipients, not both',
  invalidPhoneNumbers: (invalid: readonly string[]) =>
    `${MESSAGES.invalidPhoneNumbersPrefix}${listWithMore(invalid, invalid.length)}. ` +
    `Hong Kong numbers have exactly ${LIMITS.hkPhoneDigits} digits (852 or +852 in front is fine)`,
  tooManyRecipients: (max: number) => `A job can have at most ${max.toLocaleString('en-US')} recipients`,
  missingVariable: (variable: string, rows: readonly number[]) =>
    `Placeholder {{${variable}}} has no value in ${rows.length === 1 ? 'row' : 'rows'} ${listWithMore(rows, rows.length)}`,
  renderedTooLong: (rows: readonly number[]) =>
    `The personalised message is over ${LIMITS.messageMaxLength} characters in ${rows.length === 1 ? 'row' : 'rows'} ${listWithMore(rows, rows.length)}`,
  tooManyVariables: (count: number) =>
    `A job can have at most ${LIMITS.variablesPerJobMax} different variables (spreadsheet columns); these recipients have ${count.toLocaleString('en-US')}`,
  variableNameTooLong: (rows: readonly number[]) =>
    `A variable name is over ${LIMITS.variableNameMaxLength} characters in ${rowsText(rows)}`,
  variableTooLong: (variable: string, rows: readonly number[]) =>
    `The value of "${variable}" is over ${LIMITS.messageMaxLength} characters in ${rowsText(rows)}`,
  notLinked: 'WhatsApp is not connected. Connect your WhatsApp account before sending.',
  jobNotFound: 'Job not found',
  alreadyFinished: 'This job has already finished',
  invalidSince: 'since must be a timestamp (ISO 8601 or milliseconds since 1970)',

  // Job log lines
  jobQueued: 'Job queued: it starts when your current job finishes',
  jobStarted: (total: number) => `Job started: sending to ${total} ${total === 1 ? 'recipient' : 'recipients'}`,
  messageSent: (phone: string) => `Message sent to ${phone}`,
  messageFailed: (phone: string, reason: string) => `Failed to send to ${phone}: ${reason}`,
  retrying: (phone: string, retry: number, of: number, seconds: number) =>
    `Temporary problem sending to ${phone}; retry ${retry} of ${of} in ${seconds} s`,
  waitingForLink: 'WhatsApp is not connected; sending is paused until it reconnects',
  resumed: 'WhatsApp is connected again; sending resumed',
  unlinkedTooLong: (ms: number) => `WhatsApp stayed disconnected for ${durationText(ms)}; the job was stopped`,
  jobCompleted: (sent: number, failed: number) => `Job completed: ${sent} sent, ${failed} failed`,
  jobCancelled: MESSAGES.jobCancelled,
  /** A failure reason the sessions service did not word. */
  sendFailed: SESSION_MESSAGES.sendFailed,
  sessionsUnavailable: 'the WhatsApp service did not answer',
} as const;

export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'UNSUBSCRIBE', '退訂', '取消訂閱'] as const;
export const DEFAULT_OPT_OUT_CONFIRMATION = 'You will no longer receive messages from us';

/** Texts of the opt-out calls and of the review step and job log lines about skipped recipients. */
export const OPT_OUT_MESSAGES = {
  phoneNumbersRequired: MESSAGES.addPhoneNumbersFirst,
  phoneNumbersNotAList: 'phoneNumbers must be a list of phone numbers',
  invalidPhoneNumbers: JOB_MESSAGES.invalidPhoneNumbers,
  tooManyPhoneNumbers: `At most ${OPT_OUT_LIMITS.addMax} numbers can be added at once`,
  tooManyToCheck: `At most ${OPT_OUT_LIMITS.checkMax.toLocaleString('en-US')} numbers can be checked at once`,
  invalidCursor: 'cursor is not valid: use the nextCursor of the previous page',
  invalidLimit: `limit must be a whole number from 1 to ${OPT_OUT_LIMITS.listPageMax}`,
  invalidSearch: `q must be up to ${OPT_OUT_LIMITS.searchMaxLength} digits`,
  invalidExportFormat: 'format must be csv',
  notListed: 'This number is not on your opt-out list',
  keywordsNotAList: 'keywords must be a list of words',
  keywordsEmpty: 'Keep at least one opt-out keyword, or recipients would have no way to stop your messages',
  keywordsTooMany: `At most ${OPT_OUT_LIMITS.keywordsMax} opt-out keywords`,
  keywordBlank: 'An opt-out keyword cannot be blank',
  keywordTooLong: `Each opt-out keyword must be ${OPT_OUT_LIMITS.keywordMaxLength} characters or less`,
  confirmationEnabledNotBoolean: 'confirmationEnabled must be true or false',
  confirmationTextRequired: 'The confirmation reply cannot be empty',
  confirmationTextTooLong: `The confirmation reply must be ${OPT_OUT_LIMITS.confirmationTextMax} characters or less`,
  settingsNotAnObject: 'Send {keywords, confirmationEnabled, confirmationText}',
  /** The review step (web). */
  willBeSkipped: (n: number) => `${n} ${n === 1 ? 'recipient has' : 'recipients have'} opted out and will be skipped`,
  notOnWhatsAppSkipped: (n: number) =>
    `${n} ${n === 1 ? 'recipient is' : 'recipients are'} not on WhatsApp and will be skipped`,
  /** Job log line for a start that skipped recipients. */
  skippedAtStart: (optedOut: number, notOnWhatsApp: number) =>
    'Skipped ' +
    [
      optedOut > 0 ? `${optedOut} ${optedOut === 1 ? 'recipient who has' : 'recipients who have'} opted out` : '',
      notOnWhatsApp > 0 ? `${notOnWhatsApp} ${notOnWhatsApp === 1 ? 'number' : 'numbers'} not on WhatsApp` : '',
    ]
      .filter(Boolean)
      .join(' and '),
  skippedMidJob: (phone: string, reason: SkipReason) => `Skipped ${phone}: ${SKIP_REASON_TEXT[reason]}`,
} as const;

export const SKIP_REASON_TEXT: Record<SkipReason, string> = {
  opted_out: 'opted out',
  not_on_whatsapp: 'not on WhatsApp',
};

/** Texts of campaign results: the start caps, the report and export queries, the campaign history page. */
export const RESULTS_MESSAGES = {
  idempotencyKeyInvalid: `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${RESULTS_LIMITS.idempotencyKeyMaxLength} printable characters`,
  idempotencyKeyReused: `This ${IDEMPOTENCY_KEY_HEADER} was already used for a different request; use a new key for a new send`,
  tooManyActiveJobs: (max: number) =>
    `You already have ${max} active ${max === 1 ? 'job' : 'jobs'} (queued, scheduled, running or paused). Wait for one to finish or cancel one, then start again`,
  tooManyQueuedRecipients: (max: number, queued: number) =>
    `At most ${max.toLocaleString('en-US')} recipients can wait to be sent at once; ${queued.toLocaleString('en-US')} already wait. Wait for a job to finish or cancel one, then start again`,
  invalidStatus: `status must be one or more of ${RECIPIENT_RESULT_STATUSES.join(', ')}, comma-separated`,
  invalidCursor: 'cursor is not one this list gave out',
  invalidLimit: (max: number) => `limit must be a whole number from 1 to ${max}`,
  invalidActive: 'active must be true or false',
  invalidFormat: `format must be ${EXPORT_FORMATS.join(' or ')}`,
  invalidTimeZone: 'tz must be a time zone name such as Asia/Hong_Kong',
  invalidReportSearch: `q must be up to ${RESULTS_LIMITS.searchMaxDigits} digits of a phone number, such as 91234567 or +852 9123 4567`,
  /** The export's reason for a skipped recipient. */
  skippedReason: (reason: string) =>
    reason === 'opted_out'
      ? 'Not sent: this number opted out'
      : reason === 'not_on_whatsapp'
        ? 'Not sent: this number is not on WhatsApp'
        : 'Not sent',
  stagedBodyMissing: 'The request body could not be read back; please send it again',
  exportFailed: 'the export stopped before it was complete',
  // Web
  campaignsTitle: 'Campaigns',
  noCampaigns: 'No campaigns yet: the jobs you start appear here.',
  campaignLoaded: 'Campaign loaded into the sender: review it and press Start Sending',
  sendAgainOptedOutLeft: (n: number) =>
    `${n.toLocaleString('en-US')} opted-out ${n === 1 ? 'number was' : 'numbers were'} left out: ${n === 1 ? 'it asked' : 'they asked'} not to get messages`,
  exportDownloadFailed: 'Could not download the report',
  repliesButton: (n: number) => (n === 1 ? '1 reply' : `${n} replies`),
  repliesTitle: (phone: string) => `Replies from ${phone}`,
  repliesClose: 'Close replies',
  reportSearchLabel: 'Search by number',
  reportSearchPlaceholder: '91234567 or 852 9123 4567',
  reportSearchResults: 'Matching numbers',
  reportLoadFailed: 'Could not load the report',
} as const;
