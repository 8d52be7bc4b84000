import { combineSlices } from '@reduxjs/toolkit';
import { api } from '../api/api.js';
import { activitySlice } from '../features/activity/slice.js';
import { sessionSlice } from '../features/auth/slice.js';
import { connectionSlice } from '../features/connection/slice.js';
import { jobSlice } from '../features/job/slice.js';
import { pacingSlice } from '../features/pacing/slice.js';
import { receiptsSlice } from '../features/results/receiptsSlice.js';
import { senderSlice } from '../features/sender/slice.js';
import { templatesSlice } from '../features/templates/slice.js';
import { uiSlice } from '../features/ui/slice.js';

/**
 * Every slice of the store, combined. The state's type lives here, apart from the store, so the store's
 * listeners (listeners.ts) can read it without importing the store that registers them.
 */
export const slices = combineSlices(
  api,
  sessionSlice,
  connectionSlice,
  uiSlice,
  senderSlice,
  jobSlice,
  activitySlice,
  templatesSlice,
  pacingSlice,
  receiptsSlice,
);
export type RootState = ReturnType<typeof slices>;
