import { normalizeHkPhone } from '../web/phone.js';
import { hasLoneSurrogate, hasNul, RpcIdSchema, RpcUserIdSchema, z, type HttpCallRule } from '../common/schema.js';
import { CONTACT_SOURCES, CONTACTS_LIMITS as L } from './limits.js';
import { CONTACT_MESSAGES as M } from './messages.js';

/**
 * The contact book's payloads, each declared once: the gateway checks bodies with them, the contacts
 * service checks them again (it owns the data), and their types are what both are typed against.
 * Phone numbers are the send screen's: 8 Hong Kong digits, 852/+852 stripped (`normalizeHkPhone`).
 */

const FIELD_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const cleanText = (v: string) => !hasNul(v) && !hasLoneSurrogate(v);

/** A contact's phone: any form `normalizeHkPhone` takes, answered as the 8 digits. */
export const ContactPhoneSchema = z
  .union([z.string(), z.number()], {
    error: (i) => (i.input === undefined || i.input === null ? M.phoneRequired : M.phoneInvalid),
  })
  .transform((v, ctx) => {
    const phone = normalizeHkPhone(v);
    if (phone === undefined) {
      ctx.addIssue({ code: 'custom', message: M.phoneInvalid });
      return z.NEVER;
    }
    return phone;
  })
  .meta({ type: 'string', example: '91234567' });

const NameSchema = z
  .string({ error: M.nameInvalid })
  .transform((v) => v.trim())
  .refine((v) => v.length <= L.nameMax && cleanText(v), M.nameInvalid);

/** Custom fields: `{{variable}}`-style keys to text (numbers and booleans are taken as their text). */
export const ContactFieldsSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]), { error: M.fieldsInvalid })
  .transform((input, ctx) => {
    const out: Record<string, string> = {};
    const entries = Object.entries(input);
    if (entries.length > L.fieldsMax) ctx.addIssue({ code: 'custom', message: M.fieldsInvalid });
    for (const [key, raw] of entries) {
      const value = raw === null ? '' : String(raw).trim();
      if (!FIELD_KEY.test(key) || key.length > L.fieldKeyMax || value.length > L.fieldValueMax || !cleanText(value)) {
        ctx.addIssue({ code: 'custom', message: M.fieldsInvalid });
        return z.NEVER;
      }
      out[key] = value;
    }
    return out;
  })
  .meta({ type: 'object', additionalProperties: { type: 'string' }, example: { first_name: 'Ann' } });

/** Tags: trimmed, blank ones dropped, duplicates merged (first spelling kept). */
export const ContactTagsSchema = z
  .array(z.string({ error: M.tagsInvalid }), { error: M.tagsInvalid })
  .transform((input, ctx) => {
    const out: string[] = [];
    for (const raw of input) {
      const tag = raw.trim();
      if (tag === '') continue;
      if (tag.length > L.tagMax || !cleanText(tag)) {
        ctx.addIssue({ code: 'custom', message: M.tagsInvalid });
        return z.NEVER;
      }
      if (!out.includes(tag)) out.push(tag);
    }
    if (out.length > L.tagsMax) ctx.addIssue({ code: 'custom', message: M.tagsInvalid });
    return out;
  })
  .meta({ type: 'array', items: { type: 'string' }, example: ['vip'] });

export const ContactCreateSchema = z.object(
  {
    phone: ContactPhoneSchema,
    name: NameSchema.optional(),
    fields: ContactFieldsSchema.optional(),
    tags: ContactTagsSchema.optional(),
  },
  { error: M.bodyNotObject },
);

/** A change: only what is present changes (`fields` replaces the fields, `tags` the tags). */
export const ContactPatchSchema = z.object(
  {
    phone: ContactPhoneSchema.optional(),
    name: NameSchema.optional(),
    fields: ContactFieldsSchema.optional(),
    tags: ContactTagsSchema.optional(),
  },
  { error: M.bodyNotObject },
);

/** Query values the browser sends empty (`?tag=`) count as not given. */
const blank = (v: unknown) => (v === '' ? undefined : v);

export const ContactListQuerySchema = z.object({
  q: z.preprocess(
    blank,
    z
      .string({ error: M.searchInvalid })
      .max(L.searchMax, { error: M.searchInvalid })
      .refine(cleanText, M.searchInvalid)
      .optional(),
  ),
  tag: z.preprocess(
    blank,
    z.string({ error: M.tagInvalid }).max(L.tagMax, { error: M.tagInvalid }).refine(cleanText, M.tagInvalid).optional(),
  ),
  /** Only the contacts a saved segment selects (an unknown id is "Segment not found"). */
  segmentId: z.preprocess(
    blank,
    z.string({ error: M.segmentIdInvalid }).max(100, { error: M.segmentIdInvalid }).optional(),
  ),
  cursor: z.preprocess(blank, z.string({ error: M.cursorInvalid }).max(200, { error: M.cursorInvalid }).optional()),
  limit: z.preprocess(
    (v) => (blank(v) === undefined ? undefined : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
    z
      .int({ error: M.limitInvalid })
      .min(1, { error: M.limitInvalid })
      .max(L.listPageMax, { error: M.limitInvalid })
      .optional(),
  ),
});

/** One row of an import: like a create, but a phone that is not a number makes the row `invalid`, not the call. */
export const ContactImportRowSchema = z.object({
  phone: z.unknown(),
  name: z.unknown().optional(),
  fields: z.unknown().optional(),
  tags: z.unknown().optional(),
});

export const ContactImportBodySchema = z.object(
  {
    rows: z.array(z.unknown(), { error: M.rowsInvalid }).max(L.importRowsMax, { error: M.rowsInvalid }),
    /** Tags every imported contact gets. */
    tags: ContactTagsSchema.optional(),
  },
  { error: M.rowsInvalid },
);

/** Bulk changes of a selection (ids) or of everything a segment selects now. */
export const CONTACT_BULK_ACTIONS = ['tag', 'untag', 'delete'] as const;
export const ContactBulkSchema = z
  .object(
    {
      action: z.enum(CONTACT_BULK_ACTIONS, { error: M.bulkActionInvalid }),
      tags: ContactTagsSchema.optional(),
      ids: z
        .array(z.string({ error: M.bulkSelectionInvalid }).max(64, { error: M.bulkSelectionInvalid }), {
          error: M.bulkSelectionInvalid,
        })
        .min(1, { error: M.bulkSelectionInvalid })
        .max(L.bulkIdsMax, { error: M.bulkSelectionInvalid })
        .optional(),
      segmentId: z.string({ error: M.segmentIdInvalid }).max(100, { error: M.segmentIdInvalid }).optional(),
    },
    { error: M.bulkNotObject },
  )
  .refine((b) => (b.ids === undefined) !== (b.segmentId === undefined), {
    message: M.bulkSelectionInvalid,
    path: ['ids'],
  })
  .refine((b) => b.action === 'delete' || (b.tags ?? []).length > 0, { message: M.bulkTagsRequired, path: ['tags'] });

export const ContactBulkAnswerSchema = z.object({
  /** Contacts changed (or deleted). */
  affected: z.int(),
});

/** `POST /api/conversations/{phone}/read` and `/unread` are this body's two values. */
export const ConversationMarkSchema = z.object(
  { unread: z.boolean({ error: M.markInvalid }) },
  { error: M.markInvalid },
);

// ------------------------------------------------------------------------------------------------
// Segments

const TagList = z
  .array(z.string().min(1).max(L.tagMax), { error: M.segmentRuleInvalid })
  .max(L.ruleTagsMax, { error: M.segmentRuleInvalid });

export const SEGMENT_FIELD_OPS = ['equals', 'contains', 'isEmpty'] as const;
export type SegmentFieldOp = (typeof SEGMENT_FIELD_OPS)[number];
/** Facts a rule can ask about; `messaged`…`failed` may name a campaign (jobId), else any campaign. */
export const SEGMENT_FACTS = [
  'optedOut',
  'notOnWhatsApp',
  'messaged',
  'delivered',
  'read',
  'replied',
  'failed',
  'notMessagedForDays',
] as const;
export type SegmentFact = (typeof SEGMENT_FACTS)[number];

const FieldCondition = z.object(
  {
    key: z.string().regex(FIELD_KEY).max(L.fieldKeyMax),
    op: z.enum(SEGMENT_FIELD_OPS),
    value: z.string().max(L.fieldValueMax).refine(cleanText).optional(),
  },
  { error: M.segmentRuleInvalid },
);

const FactCondition = z.object(
  {
    fact: z.enum(SEGMENT_FACTS),
    /** false asks for contacts without the fact (default true). */
    value: z.boolean().optional(),
    /** A campaign (job id) for messaged / delivered / read / replied / failed. */
    jobId: z.uuid().optional(),
    /** notMessagedForDays only. */
    days: z.int().min(1).max(3650).optional(),
  },
  { error: M.segmentRuleInvalid },
);

export const SegmentRuleSchema = z
  .object(
    {
      tags: z.object({ anyOf: TagList.optional(), allOf: TagList.optional(), noneOf: TagList.optional() }).optional(),
      fields: z.array(FieldCondition).max(L.ruleConditionsMax).optional(),
      facts: z.array(FactCondition).max(L.ruleConditionsMax).optional(),
    },
    { error: M.segmentRuleInvalid },
  )
  .refine((r) => (r.facts ?? []).every((f) => f.fact !== 'notMessagedForDays' || f.days !== undefined), {
    message: M.segmentRuleInvalid,
  });

/** `POST /api/segments/preview` `{rule}`: the live count of a rule being edited. */
export const SegmentPreviewSchema = z.object({ rule: SegmentRuleSchema }, { error: M.segmentRuleInvalid });

export const SegmentCreateSchema = z.object(
  {
    name: z
      .string({ error: M.segmentNameInvalid })
      .transform((v) => v.trim())
      .refine((v) => v !== '' && v.length <= L.segmentNameMax && cleanText(v), M.segmentNameInvalid),
    rule: SegmentRuleSchema,
  },
  { error: M.segmentNotObject },
);

/** A finished campaign's follow-up audiences, as segment rules over its outcomes (the report's words). */
export const FOLLOW_UPS = {
  notRead: {
    label: 'Not read',
    who: 'did not read it',
    facts: (jobId: string) => [
      { fact: 'messaged' as const, jobId },
      { fact: 'read' as const, jobId, value: false },
    ],
  },
  read: { label: 'Read', who: 'read it', facts: (jobId: string) => [{ fact: 'read' as const, jobId }] },
  replied: { label: 'Replied', who: 'replied', facts: (jobId: string) => [{ fact: 'replied' as const, jobId }] },
  failed: { label: 'Failed', who: 'it failed for', facts: (jobId: string) => [{ fact: 'failed' as const, jobId }] },
} as const;
export type FollowUpKind = keyof typeof FOLLOW_UPS;

// ------------------------------------------------------------------------------------------------
// Answers

export const ContactFactsSchema = z.object({
  optedOutAt: z.string().nullable(),
  notOnWhatsAppAt: z.string().nullable(),
  lastMessagedAt: z.string().nullable(),
  lastDeliveredAt: z.string().nullable(),
  lastReadAt: z.string().nullable(),
  lastRepliedAt: z.string().nullable(),
});

export const ContactSchema = z.object({
  id: z.string(),
  phone: z.string(),
  name: z.string().nullable(),
  fields: z.record(z.string(), z.string()),
  tags: z.array(z.string()),
  source: z.enum(CONTACT_SOURCES),
  createdAt: z.string(),
  updatedAt: z.string(),
  facts: ContactFactsSchema,
});

export const ContactListAnswerSchema = z.object({
  contacts: z.array(ContactSchema),
  nextCursor: z.string().nullable(),
  total: z.int(),
});

export const ContactImportAnswerSchema = z.object({
  created: z.int(),
  updated: z.int(),
  invalid: z.int(),
  duplicates: z.int(),
  /** The rows (1-based) whose phone is not a number, for the downloadable list. */
  invalidRows: z.array(z.int()),
});

export const SegmentSchema = z.object({
  id: z.string(),
  name: z.string(),
  rule: SegmentRuleSchema,
  createdAt: z.string(),
});

export const ConversationSchema = z.object({
  phone: z.string(),
  name: z.string().optional(),
  lastMessage: z.object({ direction: z.enum(['in', 'out']), text: z.string(), at: z.string() }),
  unread: z.int(),
  /** The campaign the last reply answered, when there was one. */
  jobId: z.string().optional(),
});

export const ThreadMessageSchema = z.object({
  direction: z.enum(['in', 'out']),
  text: z.string(),
  at: z.string(),
  status: z.string().optional(),
  jobId: z.string().optional(),
});

export const ConversationAnswerSchema = z.object({
  text: z
    .string({ error: M.answerTextRequired })
    .refine((v) => v.trim() !== '', M.answerTextRequired)
    .refine((v) => v.length <= 1000, M.answerTextTooLong)
    .refine(cleanText, M.answerTextRequired),
  /** Checked by the jobs service: an attachment that is not the user's is 404 before anything is sent. */
  mediaId: z.unknown().optional().meta({
    type: 'string',
    description: 'An attachment uploaded with POST /api/media, sent with the answer as its caption',
    example: 'med_3q2hYzX9c1Vb8uKq0aTn7w',
  }),
});

/** The paths' `{phone}`: 8 digits or 852 + 8 digits. */
export function conversationPhoneOf(value: unknown): string | undefined {
  return typeof value === 'string' && /^(852)?\d{8}$/.test(value) ? normalizeHkPhone(value) : undefined;
}

// ------------------------------------------------------------------------------------------------
// NATS requests (bodies travel as the client sent them; the service checks them with the above)

export const ContactsUserRequestSchema = z.object({ userId: RpcUserIdSchema });
export const ContactListRequestSchema = z.object({ userId: RpcUserIdSchema, query: z.unknown() });
export const ContactCreateRequestSchema = z.object({
  userId: RpcUserIdSchema,
  body: z.unknown(),
  source: z.enum(CONTACT_SOURCES).optional(),
});
export const ContactRefSchema = z.object({ userId: RpcUserIdSchema, contactId: RpcIdSchema });
export const ContactUpdateRequestSchema = ContactRefSchema.extend({ body: z.unknown() });
export const ContactImportRequestSchema = z.object({
  userId: RpcUserIdSchema,
  /** The body itself, or where it was staged (`STAGED_IMPORTS_BUCKET`). */
  body: z.unknown().optional(),
  staged: z.object({ bucket: z.string().max(64), name: RpcIdSchema }).optional(),
});
export const SegmentCreateRequestSchema = z.object({ userId: RpcUserIdSchema, body: z.unknown() });
export const SegmentRefSchema = z.object({ userId: RpcUserIdSchema, segmentId: RpcIdSchema });
export const SegmentMembersRequestSchema = SegmentRefSchema.extend({
  cursor: z.string().max(64).optional(),
  /** Contacts created after this instant do not join (the recipients are fixed when a job starts). */
  asOf: z.string().max(64),
});
export const ConversationRefSchema = z.object({
  userId: RpcUserIdSchema,
  phone: z.string().max(32),
  /** false: read the thread without marking it read (a contact's history in the Contacts tab). */
  markRead: z.boolean().optional(),
});
export const ConversationMarkRequestSchema = ConversationRefSchema.extend({ unread: z.boolean() });
export const ContactBulkRequestSchema = z.object({ userId: RpcUserIdSchema, body: z.unknown() });
export const SettingsSetRequestSchema = z.object({ userId: RpcUserIdSchema, saveRecipients: z.boolean() });

export const CONTACTS_HTTP = {
  /** Import bodies are staged past one NATS message; 200,000 rows with fields fit in this. */
  import: { maxBodyBytes: 64 * 1024 * 1024 },
} as const satisfies Record<string, HttpCallRule>;
