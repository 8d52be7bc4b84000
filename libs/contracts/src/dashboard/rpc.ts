import type { z } from '../common/schema.js';
import type { DashboardGetRequestSchema, PreferencesGetRequestSchema, PreferencesSetRequestSchema } from './schemas.js';
import type { DashboardData, UserPreferences } from './types.js';

/** How many recent messages: 1..100, default 10 (LIMITS.dashboardRecentMessages); checked by the service. */
export type DashboardGetRequest = z.output<typeof DashboardGetRequestSchema>;
export type PreferencesGetRequest = z.output<typeof PreferencesGetRequestSchema>;
export type PreferencesSetRequest = z.output<typeof PreferencesSetRequestSchema>;

export interface DashboardRequests {
  'dashboard.get': { request: DashboardGetRequest; reply: DashboardData };
  /** Read by the sessions service when a link becomes ready (default true if no answer in time). */
  'dashboard.preferences.get': { request: PreferencesGetRequest; reply: UserPreferences };
  'dashboard.preferences.set': { request: PreferencesSetRequest; reply: UserPreferences };
}
