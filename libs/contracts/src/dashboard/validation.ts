import { LIMITS } from '../common/limits.js';
import type { UserPreferences } from './types.js';

export enum DashboardErrorCode {
  InvalidLimit = 'DASHBOARD_INVALID_LIMIT',
  InvalidPreferences = 'DASHBOARD_INVALID_PREFERENCES',
}

/** The spec shows no texts for these; ours name the field and what is allowed. */
export const DASHBOARD_MESSAGES = {
  invalidLimit: `limit must be a whole number from 1 to ${LIMITS.dashboardRecentMessagesMax}`,
  preferencesRequired: 'preferences must be an object',
  autoLoginMessageNotBoolean: 'auto_login_message_enabled must be true or false',
} as const;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string; field: string };

/**
 * `?limit=` of GET /api/dashboard/{userId}: absent → the default 10; otherwise an integer 1..100.
 * Accepts the raw query string or an already numeric value (the NATS request).
 */
export function parseDashboardLimit(raw: unknown): Checked<number> {
  if (raw === undefined || raw === null || raw === '') return { ok: true, value: LIMITS.dashboardRecentMessages };
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > LIMITS.dashboardRecentMessagesMax) {
    return { ok: false, field: 'limit', message: DASHBOARD_MESSAGES.invalidLimit };
  }
  return { ok: true, value: n };
}

/** Body `preferences` of POST /api/user/preferences: `{auto_login_message_enabled: boolean}`. */
export function parsePreferencesUpdate(raw: unknown): Checked<Partial<UserPreferences>> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, field: 'preferences', message: DASHBOARD_MESSAGES.preferencesRequired };
  }
  // The only preference there is, so an update without it is a mistake rather than a no-op.
  const value = (raw as Record<string, unknown>).auto_login_message_enabled;
  if (typeof value !== 'boolean') {
    return { ok: false, field: 'preferences.auto_login_message_enabled', message: DASHBOARD_MESSAGES.autoLoginMessageNotBoolean };
  }
  return { ok: true, value: { auto_login_message_enabled: value } };
}

export const DEFAULT_PREFERENCES: UserPreferences = { auto_login_message_enabled: true };
