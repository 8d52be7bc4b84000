import { createSlice, type PayloadAction } from '@reduxjs/toolkit';

export interface PacingState {
  /** "Send later" is ticked: Start waits for a valid start time. */
  later: boolean;
  /** The chosen start (ISO 8601), valid when chosen; null to start at once or while none is valid. */
  startAt: string | null;
}

const initialState: PacingState = { later: false, startAt: null };

export const pacingSlice = createSlice({
  name: 'pacing',
  initialState,
  reducers: {
    laterToggled(s, a: PayloadAction<boolean>) {
      s.later = a.payload;
      if (!a.payload) s.startAt = null;
    },
    scheduleChosen(s, a: PayloadAction<string | null>) {
      s.startAt = a.payload;
    },
    /** The scheduled job was accepted: the next send starts at once unless chosen again. */
    scheduleUsed() {
      return initialState;
    },
  },
  selectors: {
    selectStartAt: (s) => (s.later ? s.startAt : null),
    selectSendLater: (s) => s.later,
    /** Start Sending is possible as far as the schedule goes: now, or a valid time chosen. */
    selectScheduleReady: (s) => !s.later || s.startAt !== null,
  },
});

export const { laterToggled, scheduleChosen, scheduleUsed } = pacingSlice.actions;
export const { selectStartAt, selectSendLater, selectScheduleReady } = pacingSlice.selectors;
