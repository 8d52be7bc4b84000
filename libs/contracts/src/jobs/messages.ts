import { LIMITS } from '../common/limits.js';
import { MESSAGES } from '../common/messages.js';
import { SESSION_MESSAGES } from '../sessions/messages.js';

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
