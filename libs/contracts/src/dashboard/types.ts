import type { z } from '../common/schema.js';
import type {
  DashboardDataSchema,
  DashboardMessageSchema,
  DashboardSessionSchema,
  MonthlyUsageSchema,
  UserPreferencesSchema,
} from './schemas.js';

export type UserPreferences = z.output<typeof UserPreferencesSchema>;

/** One message of the read model, as the dashboard lists it (full content; the web cuts it at 100). */
export type DashboardMessage = z.output<typeof DashboardMessageSchema>;

/** A WhatsApp link of the user as the dashboard last saw it (SPEC §3 Session: id, phoneNumber). */
export type DashboardSession = z.output<typeof DashboardSessionSchema>;

/** Calendar month in UTC, `YYYY-MM`, with its counts. */
export type MonthlyUsage = z.output<typeof MonthlyUsageSchema>;

/**
 * Usage: the current (UTC) month's counts, plus the last 12 months oldest first, months without
 * messages included as zeros. A message counts once, in the month it first reached sent or failed.
 * Stats: all-time figures of the read model; successfulMessages = sent + delivered + read,
 * totalMessages also counts pending ones.
 */
export type DashboardData = z.output<typeof DashboardDataSchema>;
export type DashboardUsage = DashboardData['usage'];
export type DashboardStats = DashboardData['stats'];
