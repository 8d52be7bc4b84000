import { RpcIdSchema, RpcUserIdSchema, z } from '../common/schema.js';
import { MEDIA_KINDS, MEDIA_LIMITS } from './limits.js';
import { MEDIA_MESSAGES } from './messages.js';

/** A media id as a client sends it (`mediaId` of a start or a template): anything else is "not found". */
export const MediaIdSchema = z
  .string({ error: MEDIA_MESSAGES.notFound })
  .min(1, { error: MEDIA_MESSAGES.notFound })
  .max(MEDIA_LIMITS.mediaIdMaxLength, { error: MEDIA_MESSAGES.notFound })
  // Ids are made of these characters only: anything else (a NUL, a path) names no attachment.
  .regex(/^[A-Za-z0-9_-]+$/, { error: MEDIA_MESSAGES.notFound })
  .meta({ description: 'An attachment uploaded with POST /api/media', example: 'med_3q2hYzX9c1Vb8uKq0aTn7w' });

/** `POST /api/media` and `GET /api/media/{id}`: one stored attachment. */
export const MediaViewSchema = z.object({
  mediaId: z.string(),
  kind: z.enum(MEDIA_KINDS),
  /** Bytes. */
  size: z.int(),
  /** SHA-256 of the bytes, hex. */
  sha256: z.string(),
  fileName: z.string(),
  mime: z.string(),
  createdAt: z.iso.datetime(),
});
export type MediaView = z.output<typeof MediaViewSchema>;

export const MediaAnswerSchema = MediaViewSchema.extend({ success: z.literal(true) });

/** What a job or a template carries of its attachment, so a send needs no look-up: never the bytes. */
export const MediaRefSchema = z.object({
  mediaId: RpcIdSchema,
  /** The object's name in MEDIA_BUCKET. */
  object: RpcIdSchema,
  kind: z.enum(MEDIA_KINDS),
  mime: z.string().max(200),
  sha256: z.string().max(64),
  size: z.int().min(1),
  fileName: z.string().max(MEDIA_LIMITS.fileNameMaxLength),
});
export type MediaRef = z.output<typeof MediaRefSchema>;

/** `jobs.media.register`: an upload the gateway has stored and checked; the same bytes of the same user answer the first one. */
export const MediaRegisterRequestSchema = z.object({
  userId: RpcUserIdSchema,
  object: RpcIdSchema,
  kind: z.enum(MEDIA_KINDS),
  mime: z.string().max(200),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.int().min(1).max(MEDIA_LIMITS.maxUploadBytes),
  fileName: z.string().min(1).max(MEDIA_LIMITS.fileNameMaxLength),
});

/** `jobs.media.get`: one of the user's attachments (another user's id is "not found"). */
export const MediaGetRequestSchema = z.object({ userId: RpcUserIdSchema, mediaId: z.unknown().optional() });

/**
 * `jobs.media.hold`: a holder other than a job (a template, `template:<id>`) now holds `mediaId`, or nothing
 * (`mediaId` absent): what is held is kept past the retention period.
 */
export const MediaHoldRequestSchema = z.object({
  userId: RpcUserIdSchema,
  holder: RpcIdSchema,
  mediaId: z.unknown().optional(),
});
