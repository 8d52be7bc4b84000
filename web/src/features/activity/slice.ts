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

const at = (e: ActivityEntry) => {
  const ms = Date.parse(e.timestamp);
  return Number.isNaN(ms) ? 0 : ms;
};

export const activitySlice = createSlice({
  name: 'activity',
  initialState: { entries: [] } as ActivityState,
  reducers: {
    /**
     * Newest first by time, whatever order the socket and the polls deliver lines in (a poll after the
     * end brings the job's first lines last); lines of the same time keep their arrival order, the later
     * one above. The log keeps the last 100 entries (SPEC §9).
     */
    logAdded: {
      reducer(s, a: PayloadAction<ActivityEntry>) {
        if (a.payload.key && s.entries.some((e) => e.key === a.payload.key)) return;
        const time = at(a.payload);
        const index = s.entries.findIndex((e) => at(e) <= time);
        if (index === -1) s.entries.push(a.payload);
        else s.entries.splice(index, 0, a.payload);
        if (s.entries.length > LIMITS.activityLogMax) s.entries.length = LIMITS.activityLogMax;
      },
      prepare(entry: { type: JobLogType; message: string; timestamp?: string; key?: string }) {
        return {
          payload: {
            id: nanoid(),
            timestamp: entry.timestamp ?? new Date().toISOString(),
            type: entry.type,
            message: entry.message,
            ...(entry.key ? { key: entry.key } : {}),
          },
        };
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
