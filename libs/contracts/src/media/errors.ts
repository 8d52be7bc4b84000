/** Error codes of attachments (the `code` of an error answer). */
export enum MediaErrorCode {
  /** The upload is not a file this service can send: the message says what is wrong with it. */
  Invalid = 'MEDIA_INVALID',
  /** Larger than its kind allows (413). */
  TooLarge = 'MEDIA_TOO_LARGE',
  /** No attachment of the caller has that id (another user's id answers the same). */
  NotFound = 'MEDIA_NOT_FOUND',
  /** The request is not a multipart upload with one file in the `file` field. */
  BadUpload = 'MEDIA_BAD_UPLOAD',
  /** The store has no room left (413). */
  StoreFull = 'MEDIA_STORE_FULL',
  /** A send with an attachment failed because of the attachment (kind validation: permanent). */
  SendFailed = 'MEDIA_SEND_FAILED',
}
