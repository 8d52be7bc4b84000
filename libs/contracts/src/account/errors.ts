/** Codes of the account-and-data refusals (the gateway maps their kinds to HTTP in one place). */
export enum AccountErrorCode {
  EmailMismatch = 'ACCOUNT_EMAIL_MISMATCH',
  EmailUnknown = 'ACCOUNT_EMAIL_UNKNOWN',
  NoDeletion = 'ACCOUNT_NO_DELETION',
  RetentionInvalid = 'ACCOUNT_RETENTION_INVALID',
  AuditQueryInvalid = 'ACCOUNT_AUDIT_QUERY_INVALID',
  TakeoutRunning = 'ACCOUNT_TAKEOUT_RUNNING',
}
