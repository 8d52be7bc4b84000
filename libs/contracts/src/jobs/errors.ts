/** Error codes of the jobs module (the `code` of an error answer). */
export enum JobsErrorCode {
  MessageRequired = 'JOB_MESSAGE_REQUIRED',
  MessageTooLong = 'JOB_MESSAGE_TOO_LONG',
  PhoneNumbersRequired = 'JOB_PHONE_NUMBERS_REQUIRED',
  /** The numbers or recipients are not a list of the expected shape. */
  InvalidRecipients = 'JOB_RECIPIENTS_INVALID',
  /** Some numbers are not Hong Kong numbers; `details.invalid` lists them. */
  InvalidPhoneNumbers = 'JOB_PHONE_NUMBERS_INVALID',
  TooManyRecipients = 'JOB_TOO_MANY_RECIPIENTS',
  /** A `{{placeholder}}` has no value for some recipients; `details.variable` and `details.rows` say which. */
  MissingVariable = 'JOB_VARIABLE_MISSING',
  /** A personalised text is over the message limit once its placeholders are filled. */
  RenderedTooLong = 'JOB_RENDERED_TOO_LONG',
  /** The recipients carry more distinct variable names than LIMITS.variablesPerJobMax. */
  TooManyVariables = 'JOB_TOO_MANY_VARIABLES',
  /** A variable name is over LIMITS.variableNameMaxLength; `details.rows` says where. */
  VariableNameTooLong = 'JOB_VARIABLE_NAME_TOO_LONG',
  /** A variable value is over LIMITS.messageMaxLength; `details.variable` and `details.rows` say which. */
  VariableTooLong = 'JOB_VARIABLE_TOO_LONG',
  /** Both `phoneNumbers` and `recipients` were sent non-empty: which list is meant is unclear. */
  PhoneNumbersAndRecipients = 'JOB_PHONE_NUMBERS_AND_RECIPIENTS',
  /** The sender's WhatsApp account is not linked (409). */
  NotLinked = 'JOB_WHATSAPP_NOT_LINKED',
  /** No job with that id belongs to the caller (another user's id answers the same). */
  NotFound = 'JOB_NOT_FOUND',
  /** Cancel of a job that has already completed or failed. */
  AlreadyFinished = 'JOB_ALREADY_FINISHED',
  InvalidSince = 'JOB_SINCE_INVALID',
  /** A field other than the message and the list is not what it must be (clientId, NUL or a lone surrogate in text). */
  InvalidField = 'JOB_FIELD_INVALID',
}

/** Error codes of the opt-out calls. */
export enum OptOutsErrorCode {
  InvalidPhoneNumbers = 'OPT_OUT_PHONE_NUMBERS_INVALID',
  PhoneNumbersRequired = 'OPT_OUT_PHONE_NUMBERS_REQUIRED',
  TooManyPhoneNumbers = 'OPT_OUT_TOO_MANY_PHONE_NUMBERS',
  InvalidQuery = 'OPT_OUT_QUERY_INVALID',
  InvalidSettings = 'OPT_OUT_SETTINGS_INVALID',
  NotListed = 'OPT_OUT_NOT_LISTED',
}

/** Error codes of campaign results: idempotent starts, the per-user caps, report and export queries. */
export enum JobResultsErrorCode {
  IdempotencyKeyInvalid = 'JOB_IDEMPOTENCY_KEY_INVALID',
  /** The key was used for a different request body (409). */
  IdempotencyKeyReused = 'JOB_IDEMPOTENCY_KEY_REUSED',
  TooManyActiveJobs = 'JOB_TOO_MANY_ACTIVE',
  TooManyQueuedRecipients = 'JOB_TOO_MANY_QUEUED_RECIPIENTS',
  InvalidQuery = 'JOB_RESULTS_QUERY_INVALID',
  /** The staged start body is gone (expired, or never stored). */
  StagedBodyMissing = 'JOB_STAGED_BODY_MISSING',
}
