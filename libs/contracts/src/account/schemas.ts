import { EventEnvelopeSchema } from '../common/events.js';
import { RpcUserIdSchema, z } from '../common/schema.js';
import { ACCOUNT_LIMITS as L } from './limits.js';
import { ACCOUNT_MESSAGES as M } from './messages.js';
import { ACCOUNT_DATA_OWNERS } from './subjects.js';

/** `DELETE /api/account` `{email}`: the account's e-mail, typed to confirm. */
export const DeleteAccountBodySchema = z.object({
  email: z
    .string({ error: M.emailRequired })
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => s !== '' && s.length <= 320, M.emailRequired)
    .meta({ example: 'owner@example.com' }),
});

export const AccountUserRequestSchema = z.object({ userId: RpcUserIdSchema });

/** The gateway asks the coordinator to start (or find the running) deletion of the user. */
export const DeletionStartRequestSchema = z.object({
  userId: RpcUserIdSchema,
  /** The e-mail the user confirmed with, for the audit log. */
  actor: z.string().max(320).optional(),
});

export const DeletionStartedSchema = z.object({
  deletionId: z.string(),
  requestedAt: z.iso.datetime(),
});

export const DELETION_STATUSES = ['running', 'done'] as const;
export const DeletionServiceStateSchema = z.object({
  status: z.enum(DELETION_STATUSES),
  /** When the service's receipt came. */
  at: z.iso.datetime().optional(),
  rows: z.int().optional(),
});

/** `GET /api/account/deletion`: the latest deletion of the account, readable after its data is gone. */
export const DeletionStatusSchema = z.object({
  deletionId: z.string(),
  status: z.enum(DELETION_STATUSES),
  requestedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime().nullable(),
  services: z.record(z.string(), DeletionServiceStateSchema),
});

export const UserDeletionRequestedEventSchema = EventEnvelopeSchema.extend({
  deletionId: z.string(),
});

export const UserDeletionReceiptEventSchema = EventEnvelopeSchema.extend({
  deletionId: z.string(),
  service: z.enum(ACCOUNT_DATA_OWNERS),
  /** Rows the service deleted for this delivery (a redelivery after a crash counts what was left). */
  rows: z.int(),
});

/** `PUT /api/account/retention` `{days}`. */
export const RetentionBodySchema = z.object({
  days: z.union([z.literal(30), z.literal(90), z.literal(365), z.null()], { error: M.retentionInvalid }),
});
export const RetentionSetRequestSchema = RetentionBodySchema.extend({ userId: RpcUserIdSchema });
export const RetentionSchema = z.object({ days: RetentionBodySchema.shape.days });

export const RETENTION_DEFAULT = { days: L.retentionDefaultDays } as const;

/** Owners read every retention setting a page at a time (by user id) before their purge. */
export const RetentionPageRequestSchema = z.object({
  after: z.string().max(200).optional(),
  limit: z.int().min(1).max(L.retentionPageMax),
});
export const RetentionPageSchema = z.object({
  settings: z.array(z.object({ userId: z.string(), days: RetentionBodySchema.shape.days })),
  /** Pass as `after` for the next page; null on the last. */
  next: z.string().nullable(),
});
