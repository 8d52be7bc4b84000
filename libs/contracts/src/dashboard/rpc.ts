import type { DashboardData, UserPreferences } from './types.js';

export interface DashboardGetRequest {
  userId: string;
  /** How many recent messages: 1..100, default 10 (LIMITS.dashboardRecentMessages). */
  limit?: number;
}

export interface DashboardRequests {
  'dashboard.get': { request: DashboardGetRequest; reply: DashboardData };
  /** Read by the sessions service when a link becomes ready (default true if no answer in time). */
  'dashboard.preferences.get': { request: { userId: string }; reply: UserPreferences };
  'dashboard.preferences.set': { request: { userId: string; preferences: Partial<UserPreferences> }; reply: UserPreferences };
}
