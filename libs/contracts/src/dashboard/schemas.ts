import { LIMITS } from '../common/limits.js';
import { ClerkUserIdSchema, REQUEST_MESSAGES, RpcUserIdSchema, z } from '../common/schema.js';

/** The spec shows no texts for these; ours name the field and what is allowed. */
export const DASHBOARD_MESSAGES = {
  invalidLimit: `limit must be a whole number from 1 to ${LIMITS.dashboardRecentMessagesMax}`,
  preferencesRequired: 'preferences must be an object',
  autoLoginMessageNotBoolean: 'auto_login_message_enabled must be true or false',
} as const;

/**
 * `?limit=` of GET /api/dashboard/{userId}: absent → the default 10; otherwise an integer 1..100.
 * Accepts the raw query string or an already numeric value (the NATS request).
 */
export const DashboardLimitSchema = z
  .union(
    [
      z
        .string()
        .regex(/^\s*\d+\s*$/)
        .transform(Number),
      z.number(),
    ],
    { error: DASHBOARD_MESSAGES.invalidLimit },
  )
  .pipe(
    z
      .int({ error: DASHBOARD_MESSAGES.invalidLimit })
      .min(1, DASHBOARD_MESSAGES.invalidLimit)
      .max(LIMITS.dashboardRecentMessagesMax, DASHBOARD_MESSAGES.invalidLimit),
  )
  .meta({
    description: `recent messages, 1..${LIMITS.dashboardRecentMessagesMax} (default ${LIMITS.dashboardRecentMessages})`,
  });

export const DashboardQuerySchema = z.object({
  limit: z
    .preprocess((v) => (v === '' || v === null ? undefined : v), DashboardLimitSchema.optional())
    .transform((v) => v ?? LIMITS.dashboardRecentMessages),
});

/** `{auto_login_message_enabled: boolean}`: the only preference there is, so it is required. */
export const PreferencesUpdateSchema = z.object(
  { auto_login_message_enabled: z.boolean({ error: DASHBOARD_MESSAGES.autoLoginMessageNotBoolean }) },
  { error: DASHBOARD_MESSAGES.preferencesRequired },
);

/** POST /api/user/preferences (SPEC §7). */
export const SetPreferencesBodySchema = z.object(
  {
    clerkUserId: ClerkUserIdSchema.optional(),
    preferences: PreferencesUpdateSchema,
  },
  { error: REQUEST_MESSAGES.bodyNotObject },
);

export const UserPreferencesSchema = z.object({
  auto_login_message_enabled: z.boolean().meta({ description: 'SPEC §3: default true' }),
});

export const DashboardMessageSchema = z.object({
  id: z.string(),
  job_id: z.string(),
  recipient: z.string(),
  content: z.string(),
  status: z.enum(['pending', 'sent', 'failed', 'delivered', 'read']),
  error: z.string().nullable(),
  sent_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  replied_at: z.iso.datetime().nullable().meta({ description: 'when the recipient first answered this message' }),
  reply: z.string().nullable().meta({ description: 'the first LIMITS.replyPreviewMax characters of that answer' }),
});
export const DashboardSessionSchema = z.object({
  id: z.string(),
  phoneNumber: z.string().nullable(),
  active: z.boolean(),
  connected_at: z.iso.datetime().nullable(),
  updated_at: z.iso.datetime(),
});
export const MonthlyUsageSchema = z.object({
  month: z.string().meta({ description: 'YYYY-MM, UTC' }),
  sent: z.int(),
  failed: z.int(),
});
export const DashboardDataSchema = z.object({
  messages: z.array(DashboardMessageSchema),
  sessions: z.array(DashboardSessionSchema),
  usage: z.object({
    messages_sent_count: z.int(),
    messages_failed_count: z.int(),
    messages_skipped_count: z.int().meta({
      description: 'recipients skipped this month (opted out, not on WhatsApp): never sent to',
    }),
    monthly: z.array(MonthlyUsageSchema),
  }),
  stats: z.object({
    totalMessages: z.int(),
    successfulMessages: z.int(),
    failedMessages: z.int(),
    activeSessions: z.int(),
    repliedMessages: z.int(),
    skippedMessages: z.int().meta({ description: 'recipients your jobs skipped (opted out, not on WhatsApp)' }),
  }),
  user: z.object({ id: z.string(), preferences: UserPreferencesSchema }),
});
export const DashboardAnswerSchema = z.object({ success: z.literal(true), data: DashboardDataSchema });
export const PreferencesAnswerSchema = z.object({ success: z.literal(true), preferences: UserPreferencesSchema });

// ---- NATS requests: the envelope the dashboard service checks before a handler runs. `limit` and
// `preferences` are checked by the service (`parseDashboardLimit`, `PreferencesUpdateSchema`) in its words.

/** `dashboard.get`: `limit` of recent messages, 1..100 (default 10), as a number or the query's text. */
export const DashboardGetRequestSchema = z.object({ userId: RpcUserIdSchema, limit: z.unknown().optional() });
/** `dashboard.preferences.get`. */
export const PreferencesGetRequestSchema = z.object({ userId: RpcUserIdSchema });
/** `dashboard.preferences.set`: a partial update of the preferences. */
export const PreferencesSetRequestSchema = z.object({ userId: RpcUserIdSchema, preferences: z.unknown().optional() });
