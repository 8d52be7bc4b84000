import { describe, expect, it } from 'vitest';
import { sessionDisconnected } from '../../connection/slice.js';
import { settingsSectionSelected, tabSelected, uiSlice } from '../slice.js';

describe('navigation', () => {
  const on = (tab: Parameters<typeof tabSelected>[0]) => uiSlice.reducer(undefined, tabSelected(tab));

  it("a lost link returns to Send Messages from the spec's tabs, not from the tabs that need no phone", () => {
    expect(uiSlice.reducer(on('templates'), sessionDisconnected()).activeTab).toBe('send');
    expect(uiSlice.reducer(on('dashboard'), sessionDisconnected()).activeTab).toBe('send');
    for (const tab of ['campaigns', 'contacts', 'inbox', 'settings'] as const)
      expect(uiSlice.reducer(on(tab), sessionDisconnected()).activeTab).toBe(tab);
  });

  it('a Settings section opens Settings on it', () => {
    const s = uiSlice.reducer(on('send'), settingsSectionSelected('optouts'));
    expect(s).toEqual({ activeTab: 'settings', settingsSection: 'optouts' });
    expect(uiSlice.selectors.selectSettingsSection({ ui: on('settings') })).toBe('pace');
  });
});
