import { describe, expect, it } from '@jest/globals';
import { LIMITS } from '../../common/limits.js';
import { DASHBOARD_MESSAGES, parseDashboardLimit, parsePreferencesUpdate } from '../validation.js';

describe('parseDashboardLimit', () => {
  it('defaults to the 10 recent messages of the spec', () => {
    expect(parseDashboardLimit(undefined)).toEqual({ ok: true, value: LIMITS.dashboardRecentMessages });
    expect(parseDashboardLimit('')).toEqual({ ok: true, value: 10 });
  });

  it('accepts whole numbers from 1 to 100, as text or number', () => {
    expect(parseDashboardLimit('1')).toEqual({ ok: true, value: 1 });
    expect(parseDashboardLimit('100')).toEqual({ ok: true, value: 100 });
    expect(parseDashboardLimit(25)).toEqual({ ok: true, value: 25 });
  });

  it.each(['0', '101', '-1', '1.5', 'abc', '1e2', 2.5, ['5']])('refuses %p', (raw) => {
    expect(parseDashboardLimit(raw)).toEqual({ ok: false, field: 'limit', message: DASHBOARD_MESSAGES.invalidLimit });
  });
});

describe('parsePreferencesUpdate', () => {
  it('accepts a boolean auto_login_message_enabled', () => {
    expect(parsePreferencesUpdate({ auto_login_message_enabled: false })).toEqual({
      ok: true,
      value: { auto_login_message_enabled: false },
    });
  });

  it.each([undefined, null, 'x', [true]])('refuses preferences %p', (raw) => {
    expect(parsePreferencesUpdate(raw)).toMatchObject({ ok: false, field: 'preferences' });
  });

  it.each([undefined, 'true', 1, null])('refuses auto_login_message_enabled %p', (value) => {
    expect(parsePreferencesUpdate({ auto_login_message_enabled: value })).toEqual({
      ok: false,
      field: 'preferences.auto_login_message_enabled',
      message: DASHBOARD_MESSAGES.autoLoginMessageNotBoolean,
    });
  });
});
