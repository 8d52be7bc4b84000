import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DASHBOARD_MESSAGES, DashboardErrorCode } from '@bns/contracts';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { ProjectionRepository } from '../../projection/projection.repository.js';
import { DashboardService } from '../dashboard.service.js';
import { PreferencesRepository } from '../preferences.repository.js';

let app: InProcess;
let dashboard: DashboardService;

beforeAll(async () => {
  app = await inProcess([ProjectionRepository, PreferencesRepository, DashboardService]);
  dashboard = app.module.get(DashboardService);
}, 60_000);

afterAll(() => app?.stop());

describe('preferences', () => {
  it('default to enabled, then keep what the user set, per user', async () => {
    expect(await dashboard.preferences('pref-ann')).toEqual({ auto_login_message_enabled: true });
    expect(await dashboard.setPreferences('pref-ann', { auto_login_message_enabled: false })).toEqual({
      auto_login_message_enabled: false,
    });
    expect(await dashboard.preferences('pref-ann')).toEqual({ auto_login_message_enabled: false });
    expect((await dashboard.get('pref-ann', undefined)).user).toEqual({
      id: 'pref-ann',
      preferences: { auto_login_message_enabled: false },
    });
    expect(await dashboard.setPreferences('pref-ann', { auto_login_message_enabled: true })).toEqual({
      auto_login_message_enabled: true,
    });
    expect(await dashboard.preferences('pref-ann')).toEqual({ auto_login_message_enabled: true });
    expect(await dashboard.preferences('pref-bob')).toEqual({ auto_login_message_enabled: true });
  });

  it('two first saves at once both succeed', async () => {
    await Promise.all([
      dashboard.setPreferences('pref-cy', { auto_login_message_enabled: false }),
      dashboard.setPreferences('pref-cy', { auto_login_message_enabled: false }),
    ]);
    expect(await dashboard.preferences('pref-cy')).toEqual({ auto_login_message_enabled: false });
  });

  it('refuses a bad update with a validation error, and a bad limit likewise', async () => {
    await expect(dashboard.setPreferences('pref-dee', { auto_login_message_enabled: 'yes' })).rejects.toMatchObject({
      code: DashboardErrorCode.InvalidPreferences,
      message: DASHBOARD_MESSAGES.autoLoginMessageNotBoolean,
    });
    await expect(dashboard.get('pref-dee', 'many')).rejects.toMatchObject({ code: DashboardErrorCode.InvalidLimit });
    expect(await dashboard.preferences('pref-dee')).toEqual({ auto_login_message_enabled: true });
  });
});
