import { createSlice, type PayloadAction } from '@reduxjs/toolkit';

export interface PacingState {
  /** "Send later": the chosen start (ISO 8601), or null to start at once. */
  startAt: string | null;
}

const initialState: PacingState = { startAt: null };

export const pacingSlice = createSlice({
  name: 'pacing',
  initialState,
  reducers: {
    scheduleChosen(s, a: PayloadAction<string | null>) {
      s.startAt = a.payload;
    },
  },
  selectors: {
    selectStartAt: (s) => s.startAt,
  },
});

export const { scheduleChosen } = pacingSlice.actions;
export const { selectStartAt } = pacingSlice.selectors;
