/** Codes of the contacts service's refusals (the gateway maps their kinds to HTTP in one place). */
export enum ContactsErrorCode {
  InvalidContact = 'CONTACT_INVALID',
  InvalidQuery = 'CONTACT_QUERY_INVALID',
  NotFound = 'CONTACT_NOT_FOUND',
  AlreadyExists = 'CONTACT_ALREADY_EXISTS',
  LimitReached = 'CONTACT_LIMIT_REACHED',
  InvalidImport = 'CONTACT_IMPORT_INVALID',
  ImportExpired = 'CONTACT_IMPORT_EXPIRED',
  InvalidSegment = 'SEGMENT_INVALID',
  SegmentNotFound = 'SEGMENT_NOT_FOUND',
  SegmentLimitReached = 'SEGMENT_LIMIT_REACHED',
  InvalidConversation = 'CONVERSATION_INVALID',
}
