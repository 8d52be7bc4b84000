import { hasNul, isBlankText, RpcIdSchema, RpcUserIdSchema, z } from '../common/schema.js';
import { LIMITS } from '../common/limits.js';
import { StartJobBodySchema } from '../jobs/schemas.js';
import { MediaViewSchema } from '../media/schemas.js';
import { INTEGRATIONS_LIMITS as L } from './limits.js';
import { INTEGRATIONS_MESSAGES as M } from './messages.js';

/**
 * Bodies and answers of the /v1 API, declared once: the gateway validates with them and the OpenAPI
 * document at /v1/openapi.json is generated from them.
 */

/** A /v1 message's own references: text keys to text values, bounded (INTEGRATIONS_LIMITS). */
export const MessageMetadataSchema = z
  .record(
    z.string({ error: M.messageMetadataInvalid }).max(L.messageMetadataKeyMax, M.messageMetadataInvalid),
    z.string({ error: M.messageMetadataInvalid }).max(L.messageMetadataValueMax, M.messageMetadataInvalid),
    {
      error: M.messageMetadataInvalid,
    },
  )
  .refine((m) => Object.keys(m).length <= L.messageMetadataKeysMax, M.messageMetadataInvalid)
  .refine((m) => Object.entries(m).every(([k, v]) => !hasNul(k) && !hasNul(v)), M.messageMetadataHasNul)
  .refine(
    (m) => new TextEncoder().encode(JSON.stringify(m)).length <= L.messageMetadataBytesMax,
    M.messageMetadataTooLarge,
  );
export type MessageMetadata = z.output<typeof MessageMetadataSchema>;

const Variables = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]), { error: M.variablesInvalid });

/** `POST /v1/messages`: one transactional message. */
export const V1MessageCreateSchema = z
  .object({
    to: z.union([z.string(), z.number()], { error: M.messageToRequired }).transform(String).meta({
      description: 'Recipient: an 8-digit Hong Kong number (852/+852 stripped) or international digits',
      example: '91234567',
    }),
    text: z
      .string({ error: M.messageTextRequired })
      .refine((t) => !isBlankText(t), M.messageTextRequired)
      .refine(
        (t) => t.length <= LIMITS.messageMaxLength,
        `The message must be ${LIMITS.messageMaxLength} characters or less`,
      )
      .refine((t) => !hasNul(t), 'text must not contain the NUL character (U+0000)')
      .optional()
      .meta({ example: 'Your order #1042 has shipped' }),
    templateId: z
      .uuid({ error: M.templateNotFound })
      .optional()
      .meta({ description: 'Send a saved template instead of text' }),
    variables: Variables.optional().meta({
      description: 'Fills {{placeholders}} of the text or template',
      example: { order: '1042' },
    }),
    mediaId: z.unknown().optional().meta({
      type: 'string',
      description:
        "An attachment uploaded with POST /v1/media, sent with the text as its caption (a template's own attachment when absent)",
      example: 'med_3q2hYzX9c1Vb8uKq0aTn7w',
    }),
    metadata: MessageMetadataSchema.optional().meta({
      description: `Your own references: stored with the message and echoed by GET /v1/messages/{id} and every message.* webhook of it (at most ${L.messageMetadataKeysMax} keys, ${L.messageMetadataBytesMax} bytes)`,
      example: { orderId: '1042' },
    }),
  })
  .refine((b) => (b.text === undefined) !== (b.templateId === undefined), {
    message: M.messageTextOrTemplate,
    path: ['text'],
  });
export type V1MessageCreate = z.output<typeof V1MessageCreateSchema>;

export const V1MessageAcceptedSchema = z.object({ id: z.string(), status: z.literal('queued') });
export const V1_MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'replied', 'failed', 'skipped'] as const;
export const V1MessageSchema = z.object({
  id: z.string(),
  to: z.string(),
  status: z.enum(V1_MESSAGE_STATUSES),
  timeline: z.array(
    z.object({ status: z.enum(V1_MESSAGE_STATUSES), at: z.iso.datetime(), reason: z.string().optional() }),
  ),
  /** What the message was sent with, when it carried metadata. */
  metadata: z.record(z.string(), z.string()).optional(),
});
export type V1Message = z.output<typeof V1MessageSchema>;

/** `POST /v1/media` and `GET /v1/media/{id}`: one stored attachment. */
export const V1MediaSchema = MediaViewSchema;

/** `POST /v1/campaigns`: the web's start body (message, phoneNumbers or recipients with variables, startAt). */
/** `POST /v1/campaigns`: the web's start body, or a saved segment's contacts instead of the numbers. */
export const V1CampaignCreateSchema = StartJobBodySchema;
export const V1CampaignSegmentSchema = z.object({
  segmentId: z.string().optional().meta({
    description:
      "A saved segment (GET /v1/segments): its contacts as they are now are the recipients, each with the contact's name and fields as variables; send it instead of phoneNumbers and recipients",
  }),
});

export const V1OptOutsAddSchema = z.object({
  phoneNumbers: z.array(z.union([z.string(), z.number()])).meta({ example: ['91234567'] }),
});

export const V1ListQuerySchema = z.object({
  cursor: z.string().max(200).optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/)
    .optional(),
});

export const V1AccountSchema = z.object({
  userId: z.string(),
  whatsapp: z.object({ state: z.string(), phoneNumber: z.string().optional() }),
  policy: z.record(z.string(), z.unknown()),
  /** Today's sends against the daily cap, as the jobs service counts them (the policy's time zone, warm-up included). */
  today: z.object({
    date: z.string().meta({ example: '2026-06-01' }),
    timeZone: z.string().meta({ example: 'Asia/Hong_Kong' }),
    sent: z.int(),
    cap: z.int().nullable(),
    remaining: z.int().nullable(),
    /** Messages to numbers that never replied: this month, the last 30 days, and the policy's limit on the 30 days. */
    unanswered: z.object({ month: z.int(), last30Days: z.int(), limit: z.int().nullable() }),
  }),
});

export const V1ProblemSchema = z.object({
  type: z.string().meta({ example: '/v1/problems/validation' }),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  errors: z.record(z.string(), z.string()).optional(),
  errorId: z.string().optional(),
});

// ---- NATS requests: a /v1 message's metadata, kept by the integrations service ----
/** Stored once the message was queued (its id is the one-recipient job's); the service checks `metadata` again. */
export const MessageMetadataPutRequestSchema = z.object({
  userId: RpcUserIdSchema,
  messageId: RpcIdSchema,
  metadata: z.unknown(),
});
export type MessageMetadataPutRequest = z.output<typeof MessageMetadataPutRequestSchema>;
export const MessageMetadataRefSchema = z.object({ userId: RpcUserIdSchema, messageId: RpcIdSchema });
export type MessageMetadataRef = z.output<typeof MessageMetadataRefSchema>;
