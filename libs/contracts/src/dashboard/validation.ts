import { checkWith } from '../common/schema.js';
import { DashboardLimitSchema, PreferencesUpdateSchema } from './schemas.js';
import { LIMITS } from '../common/limits.js';
import type { UserPreferences } from './types.js';

export { DASHBOARD_MESSAGES } from './schemas.js';

export enum DashboardErrorCode {
  InvalidLimit = 'DASHBOARD_INVALID_LIMIT',
  InvalidPreferences = 'DASHBOARD_INVALID_PREFERENCES',
}

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string; field: string };

function fieldResult<T>(checked: ReturnType<typeof checkWith>, prefix: string): Checked<T> {
  if (checked.ok) return { ok: true, value: checked.value as T };
  return { ok: false, message: checked.message, field: checked.field === '' ? prefix : `${prefix}.${checked.field}` };
}

/**
 * `?limit=` of GET /api/dashboard/{userId}: absent → the default 10; otherwise an integer 1..100.
 * Accepts the raw query string or an already numeric value (the NATS request).
 */
export function parseDashboardLimit(raw: unknown): Checked<number> {
  if (raw === undefined || raw === null || raw === '') return { ok: true, value: LIMITS.dashboardRecentMessages };
  const checked = checkWith(DashboardLimitSchema, raw);
  return checked.ok ? checked : { ok: false, message: checked.message, field: 'limit' };
}

/** Body `preferences` of POST /api/user/preferences: `{auto_login_message_enabled: boolean}`. */
export function parsePreferencesUpdate(raw: unknown): Checked<Partial<UserPreferences>> {
  const checked = checkWith(PreferencesUpdateSchema, Array.isArray(raw) ? undefined : raw);
  return fieldResult(checked, 'preferences');
}

export const DEFAULT_PREFERENCES: UserPreferences = { auto_login_message_enabled: true };
