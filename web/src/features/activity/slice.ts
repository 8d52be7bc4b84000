import { createSlice, nanoid, type PayloadAction } from '@reduxjs/toolkit';
import { LIMITS, type JobLogType } from '@bns/contracts';

export interface ActivityEntry {
  id: string;
  type: JobLogType;
  message: string;
  timestamp: string;
  /** Set for a job's server log, so the same line from the socket and from polling shows once. */
  key?: string;
}

export interface ActivityState {
  entries: ActivityEntry[];
}

export const activitySlice = createSlice({
  name: 'activity',
  initialState: { entries: [] } as ActivityState,
  reducers: {
    /** Newest first; the log keeps the last 100 entries (SPEC §9). */
    logAdded: {
      reducer(s, a: PayloadAction<ActivityEntry>) {
        if (a.payload.key && s.entries.some((e) => e.key === a.payload.key)) return;
        s.entries.unshift(a.payload);
        if (s.entries.length > LIMITS.activityLogMax) s.entries.length = LIMITS.activityLogMax;
      },
      prepare(entry: { type: JobLogType; message: string; timestamp?: string; key?: string }) {
        return { payload: { id: nanoid(), timestamp: entry.timestamp ?? new Date().toISOString(), type: entry.type, message: entry.message, ...(entry.key ? { key: entry.key } : {}) } };
      },
    },
    logCleared(s) {
      s.entries = [];
    },
  },
  selectors: {
    selectActivity: (s) => s.entries,
  },
});

export const { logAdded, logCleared } = activitySlice.actions;
export const { selectActivity } = activitySlice.selectors;

/** The key of a server log line: a job's line is unique by its time and text. */
export function jobLogKey(jobId: string, log: { timestamp: string; message: string }): string {
  return `${jobId}|${log.timestamp}|${log.message}`;
}
