import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import { noSession, sessionDisconnected } from '../connection/slice.js';

export type TabId = 'send' | 'dashboard' | 'templates' | 'campaigns' | 'contacts' | 'inbox' | 'settings';
export type SettingsSection = 'pace' | 'optouts' | 'api' | 'account';

export interface UiState {
  activeTab: TabId;
  settingsSection?: SettingsSection;
}

/** The spec's tabs that exist only while WhatsApp is linked (SPEC §6). */
export const LINKED_ONLY_TABS: readonly TabId[] = ['dashboard', 'templates'];

export const uiSlice = createSlice({
  name: 'ui',
  initialState: { activeTab: 'send' } as UiState,
  reducers: {
    tabSelected(s, a: PayloadAction<TabId>) {
      s.activeTab = a.payload;
    },
    settingsSectionSelected(s, a: PayloadAction<SettingsSection>) {
      s.activeTab = 'settings';
      s.settingsSection = a.payload;
    },
  },
  // A lost connection returns the user to Send Messages (SPEC §2, §4.7) from the spec's tabs; Campaigns,
  // Contacts, Inbox and Settings need no phone and stay where they are.
  extraReducers: (b) => {
    const back = (s: UiState) => {
      if (s.activeTab === 'send' || LINKED_ONLY_TABS.includes(s.activeTab)) s.activeTab = 'send';
    };
    b.addCase(sessionDisconnected, back);
    b.addCase(noSession, back);
  },
  selectors: {
    selectActiveTab: (s) => s.activeTab,
    selectSettingsSection: (s): SettingsSection => s.settingsSection ?? 'pace',
  },
});

export const { tabSelected, settingsSectionSelected } = uiSlice.actions;
export const { selectActiveTab, selectSettingsSection } = uiSlice.selectors;
