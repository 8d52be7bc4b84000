import { formatMegabytes, MEDIA_FORMATS, MEDIA_LIMITS, type MediaFormat, type MediaKind } from './limits.js';

const KIND_PLURAL: Record<MediaKind, string> = {
  image: 'Images',
  video: 'Videos',
  audio: 'Sounds',
  document: 'Documents',
};

/** Texts of attachments: every refusal of an upload says what is wrong in plain words. */
export const MEDIA_MESSAGES = {
  notMultipart: 'Send the file as multipart/form-data, in the field "file".',
  noFile: 'Choose a file to attach (the form field "file" is missing).',
  moreThanOneFile: 'Attach one file at a time.',
  empty: 'The file is empty.',
  noName: 'The file has no name.',
  nameHasPath: 'The file name must be a name only, without a folder path.',
  nameInvalid: 'The file name contains characters that cannot be used (control characters).',
  nameTooLong: `The file name is too long (at most ${MEDIA_LIMITS.fileNameMaxLength} characters).`,
  program: 'This file is a program, not a picture, video, sound or document: it cannot be sent.',
  webPage: 'This file is a web page (HTML), which cannot be sent as an attachment.',
  polyglot: 'This PDF also contains a web page (HTML), so it cannot be sent. Save it again as a plain PDF.',
  unsupported:
    'This kind of file cannot be sent. Attach a JPEG, PNG or WebP image, an MP4 video, an MP3, OGG or M4A sound, or a PDF, DOCX, XLSX, PPTX, TXT, CSV or ZIP document.',
  truncated: (format: MediaFormat) =>
    `The file is incomplete: ${MEDIA_FORMATS[format].label} cut off before its end. Save or download it again.`,
  tooLarge: (kind: MediaKind) =>
    `${KIND_PLURAL[kind]} can be up to ${formatMegabytes(MEDIA_LIMITS.maxBytes[kind])}; this file is larger.`,
  uploadTooLarge: `Files can be up to ${formatMegabytes(MEDIA_LIMITS.maxUploadBytes)}; this file is larger.`,
  nameMismatch: (ext: string, format: MediaFormat) =>
    `The file is named .${ext} but is ${MEDIA_FORMATS[format].label}. Rename it or attach the right file.`,
  zipBomb: 'This archive would unpack to far more than its own size (a "zip bomb"), so it cannot be sent.',
  zipUnreadable: "The archive's list of files cannot be read: it is damaged or incomplete.",
  zipUnsafeName: 'The archive contains a file with a folder path outside the archive, so it cannot be sent.',
  officeMismatch: 'The file is named like an Office document but is not a DOCX, XLSX or PPTX inside.',
  textNotUtf8: 'The text file is not UTF-8 text. Save it as UTF-8 and attach it again.',
  textBinary: 'The text file contains binary data (NUL bytes), so it is not a text file.',
  videoCodec: 'Videos must be MP4 with H.264 video and AAC sound; this one uses another format.',
  notFound: 'Attachment not found',
  // A send's failure with an attachment, recorded per recipient.
  sendMissing: 'The attachment is no longer stored (deleted or damaged), so it could not be sent.',
  sendFetchFailed: 'The attachment could not be read from storage just now; the message will be tried again.',
  sendUploadFailed: 'WhatsApp did not take the attachment (its upload failed).',
  sendTooLarge: 'WhatsApp refused the attachment as too large.',
  sendUnsupported: 'WhatsApp refused the attachment as a file type it does not accept.',
  storeFull: 'There is no room left to store attachments. Try again later or ask the administrator.',
  // The web's attachment control.
  limitsHint: `Images (JPEG, PNG, WebP) up to ${formatMegabytes(MEDIA_LIMITS.maxBytes.image)}, MP4 videos and MP3, OGG or M4A sounds up to ${formatMegabytes(MEDIA_LIMITS.maxBytes.video)}, documents (PDF, DOCX, XLSX, PPTX, TXT, CSV, ZIP) up to ${formatMegabytes(MEDIA_LIMITS.maxBytes.document)}. The message is sent as its caption.`,
  uploading: 'Uploading the file…',
  uploadFailed: 'The file could not be uploaded. Check the connection and try again.',
  attachmentMissing: 'The attachment is no longer stored: attach the file again.',
} as const;
