/**
 * Every user-facing text of the spec, word for word (SPEC.md §5, §8). Server and web both import these,
 * so a message can never differ between what the API answers and what the UI shows.
 */
export const MESSAGES = {
  // Template form (SPEC §5)
  templateNameRequired: 'Template name is required',
  templateNameTooLong: 'Template name must be 100 characters or less',
  messageContentRequired: 'Message content is required',
  messageContentTooLong: 'Message content must be 1000 characters or less',
  // The spec does not show the description message; ours follows the same pattern.
  descriptionTooLong: 'Description must be 500 characters or less',
  phoneNumberInvalid: 'Phone number must be 8-15 digits',
  invalidPhoneNumbersPrefix: 'Invalid phone numbers: ',
  phoneNumberDuplicate: 'Phone number already added',
  phoneNumbersMax: 'Maximum 200 phone numbers allowed',
  categoryInvalid: 'Category must be one of general, marketing, personal, business, custom',
  fixFormErrors: 'Please fix the form errors',

  // Sending screen (SPEC §5)
  noValidNumbersInSpreadsheet: 'No valid phone numbers found in spreadsheet',
  enterMessageFirst: 'Please enter a message first',
  addPhoneNumbersFirst: 'Please add phone numbers first',
  templateMessageEmpty: 'Template message is empty',
  noPhoneNumbersInTemplate: 'No phone numbers found in template',

  // Error catalogue (SPEC §8)
  errorLoadingDashboard: 'Error loading dashboard',
  tryAgain: 'Try Again',
  connectionError: 'Connection error. Please check your internet connection.',
  connectionRestored: 'Connection restored',
  connectionFailed: 'Connection failed. Please refresh the page.',
  qrMaxAttemptsRefresh: 'Please refresh the page to try connecting again',
  errorStartingJob: 'Error starting job',
  jobCancelled: 'Job was cancelled',
  errorMonitoringJob: 'Error monitoring job',
  failedToSaveTemplate: 'Failed to save template',
  failedToUpdateFavorite: 'Failed to update favorite status',
  errorUpdatingTemplate: 'Error updating template',
  failedToDuplicateTemplate: 'Failed to duplicate template',
  errorDuplicatingTemplate: 'Error duplicating template',
  failedToDeleteTemplate: 'Failed to delete template',
  errorDeletingTemplate: 'Error deleting template',
  errorUsingTemplate: 'Error using template',
  senderUnavailable: 'Bulk messaging system not available',

  // Platform (ours, not in the spec)
  unauthorized: 'unauthorized',
  forbidden: 'You can only access your own data',
  notFound: 'Not found',
  rateLimited: 'Too Many Requests',
  payloadTooLarge: 'Request body is too large',
  /** A service's answer did not fit in one NATS message (CommonErrorCode.ReplyTooLarge). */
  replyTooLarge: 'The answer is too large to send at once. Ask for fewer items.',
  serviceUnavailable: 'The service is temporarily unavailable. Please try again shortly.',
  overloaded: 'The server is busy. Please try again shortly.',
  internal: 'Something went wrong on our side. Please try again; quote the error id if it persists.',
} as const;

export type MessageKey = keyof typeof MESSAGES;

/** "Invalid phone numbers: a, b" (SPEC §5). */
export function invalidPhoneNumbersMessage(numbers: readonly string[]): string {
  return MESSAGES.invalidPhoneNumbersPrefix + numbers.join(', ');
}

/**
 * The template form's error for numbers that are not 8-15 digits, naming them: one bad number gets the
 * rule and its name ("Phone number must be 8-15 digits. Invalid phone numbers: 1234"), several the list.
 */
export function phoneNumbersNotValidMessage(numbers: readonly string[]): string {
  return numbers.length === 1
    ? `${MESSAGES.phoneNumberInvalid}. ${invalidPhoneNumbersMessage(numbers)}`
    : invalidPhoneNumbersMessage(numbers);
}
