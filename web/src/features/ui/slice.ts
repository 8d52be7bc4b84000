import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import { noSession, sessionDisconnected } from '../connection/slice.js';

export type TabId = 'send' | 'dashboard' | 'templates' | 'integrations';

export interface UiState {
  activeTab: TabId;
}

export const uiSlice = createSlice({
  name: 'ui',
  initialState: { activeTab: 'send' } as UiState,
  reducers: {
    tabSelected(s, a: PayloadAction<TabId>) {
      s.activeTab = a.payload;
    },
  },
  // A lost connection returns the user to Send Messages (SPEC §2, §4.7).
  extraReducers: (b) => {
    b.addCase(sessionDisconnected, (s) => {
      s.activeTab = 'send';
    });
    b.addCase(noSession, (s) => {
      s.activeTab = 'send';
    });
  },
  selectors: {
    selectActiveTab: (s) => s.activeTab,
  },
});

export const { tabSelected } = uiSlice.actions;
export const { selectActiveTab } = uiSlice.selectors;
