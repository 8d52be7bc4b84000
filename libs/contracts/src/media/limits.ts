const MiB = 1024 * 1024;

/** The four kinds of attachment a message can carry, as WhatsApp sends them. */
export const MEDIA_KINDS = ['image', 'video', 'audio', 'document'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/**
 * The file formats an attachment may be, found from its bytes (never from its name): each with its kind,
 * its MIME type and the file-name endings it may carry.
 */
export const MEDIA_FORMATS = {
  jpeg: { kind: 'image', mime: 'image/jpeg', label: 'a JPEG image', ext: ['jpg', 'jpeg', 'jfif'] },
  png: { kind: 'image', mime: 'image/png', label: 'a PNG image', ext: ['png'] },
  webp: { kind: 'image', mime: 'image/webp', label: 'a WebP image', ext: ['webp'] },
  mp4: { kind: 'video', mime: 'video/mp4', label: 'an MP4 video', ext: ['mp4', 'm4v'] },
  mp3: { kind: 'audio', mime: 'audio/mpeg', label: 'an MP3 sound', ext: ['mp3'] },
  ogg: { kind: 'audio', mime: 'audio/ogg; codecs=opus', label: 'an OGG sound', ext: ['ogg', 'oga', 'opus'] },
  m4a: { kind: 'audio', mime: 'audio/mp4', label: 'an M4A sound', ext: ['m4a', 'mp4'] },
  pdf: { kind: 'document', mime: 'application/pdf', label: 'a PDF document', ext: ['pdf'] },
  docx: {
    kind: 'document',
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    label: 'a Word document (DOCX)',
    ext: ['docx'],
  },
  xlsx: {
    kind: 'document',
    mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    label: 'an Excel workbook (XLSX)',
    ext: ['xlsx'],
  },
  pptx: {
    kind: 'document',
    mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    label: 'a PowerPoint presentation (PPTX)',
    ext: ['pptx'],
  },
  zip: { kind: 'document', mime: 'application/zip', label: 'a ZIP archive', ext: ['zip'] },
  txt: { kind: 'document', mime: 'text/plain; charset=utf-8', label: 'a text file', ext: ['txt', 'text', 'log', 'md'] },
  csv: { kind: 'document', mime: 'text/csv; charset=utf-8', label: 'a CSV file', ext: ['csv'] },
} as const satisfies Record<string, { kind: MediaKind; mime: string; label: string; ext: readonly string[] }>;
export type MediaFormat = keyof typeof MEDIA_FORMATS;

/**
 * Attachment limits: what WhatsApp itself accepts, or less. Sizes are bytes (MB here is MiB, as
 * WhatsApp counts them).
 */
export const MEDIA_LIMITS = {
  /** Largest file of each kind. */
  maxBytes: { image: 5 * MiB, video: 16 * MiB, audio: 16 * MiB, document: 64 * MiB } satisfies Record<
    MediaKind,
    number
  >,
  /** Largest upload of any kind: the refusal comes as soon as this many bytes have arrived. */
  maxUploadBytes: 64 * MiB,
  /** A file name (sent with a document): at most this many characters. */
  fileNameMaxLength: 200,
  /** The first bytes the sniffer keeps: enough for every format's header and the HTML checks. */
  sniffHeadBytes: 64 * 1024,
  /** The last bytes the sniffer keeps: a ZIP's file list and every format's end marker must be in them. */
  sniffTailBytes: 1 * MiB,
  /** A ZIP-based file (DOCX, XLSX, PPTX, ZIP) may list at most this many files... */
  zipMaxEntries: 10_000,
  /** ...unpacking to at most this many bytes in all... */
  zipMaxUnpackedBytes: 512 * MiB,
  /** ...and to at most this many times its own size (a zip bomb packs far more). */
  zipMaxRatio: 100,
  /** The upload's id, the object's name and the media id: at most this long. */
  mediaIdMaxLength: 64,
  /** Unreferenced media are deleted after this many days (MEDIA_RETENTION_DAYS). */
  defaultRetentionDays: 30,
  /** Bytes of attachments a sessions shard keeps in memory to send a job's recipients from (one copy each). */
  defaultSessionsCacheBytes: 128 * MiB,
  /** The object store bucket's size cap (MEDIA_BUCKET_MAX_BYTES); full, an upload is refused (507 → 413). */
  defaultBucketMaxBytes: 10 * 1024 * MiB,
  /**
   * The review's estimate of WhatsApp taking the file once, before the first message (later ones reuse
   * it): this many seconds per MB, a modest phone-network upload speed (about 8 Mbit/s).
   */
  estimatedUploadSecondsPerMb: 1,
} as const;

/** Seconds the review adds for the attachment's one upload, rounded up (MEDIA_LIMITS.estimatedUploadSecondsPerMb). */
export function estimatedUploadSeconds(bytes: number): number {
  return Math.ceil((bytes / MiB) * MEDIA_LIMITS.estimatedUploadSecondsPerMb);
}

/** A file's size as the web shows it: "820 bytes", "14 KB", "1.5 MB" (MB being MiB, as WhatsApp counts). */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < MiB) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / MiB;
  return `${mb >= 10 ? Math.round(mb) : Number(mb.toFixed(1))} MB`;
}

/** "5 MB" for the refusals and the web's hints. */
export function formatMegabytes(bytes: number): string {
  const mb = bytes / MiB;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
