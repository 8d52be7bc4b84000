import { describe, expect, it } from 'vitest';
import { LIMITS } from '@bns/contracts';
import { activitySlice, logAdded, type ActivityState } from '../slice.js';

const add = (s: ActivityState, message: string, timestamp: string, key?: string) =>
  activitySlice.reducer(s, logAdded({ type: 'info', message, timestamp, ...(key ? { key } : {}) }));
const messages = (s: ActivityState) => s.entries.map((e) => e.message);

describe('Activity Log order', () => {
  it('is newest first by time, whatever order the socket and the polls deliver the lines in', () => {
    let s: ActivityState = { entries: [] };
    // The socket pushes the sends; the poll after the end brings the job's first line last.
    s = add(s, 'Message sent to 91230001', '2025-01-01T10:32:20.000Z');
    s = add(s, 'Job completed: 1 sent, 0 failed', '2025-01-01T10:32:51.000Z');
    s = add(s, 'Job started: 1 recipient', '2025-01-01T10:32:15.000Z');
    s = add(s, 'Job accepted: 1 recipient, estimated 1 min', '2025-01-01T10:32:14.500Z');
    expect(messages(s)).toEqual([
      'Job completed: 1 sent, 0 failed',
      'Message sent to 91230001',
      'Job started: 1 recipient',
      'Job accepted: 1 recipient, estimated 1 min',
    ]);
  });

  it('keeps arrival order on equal times (the later one above) and shows a repeated line once', () => {
    let s: ActivityState = { entries: [] };
    const t = '2025-01-01T10:00:00.000Z';
    s = add(s, 'first', t, 'k1');
    s = add(s, 'second', t, 'k2');
    s = add(s, 'first', t, 'k1');
    expect(messages(s)).toEqual(['second', 'first']);
  });

  it('keeps the newest 100 entries, dropping the oldest whatever arrives last', () => {
    let s: ActivityState = { entries: [] };
    for (let i = 0; i < LIMITS.activityLogMax; i++)
      s = add(s, `line ${i}`, new Date(Date.UTC(2025, 0, 1, 0, 0, i + 10)).toISOString());
    s = add(s, 'too old', new Date(Date.UTC(2025, 0, 1)).toISOString());
    expect(s.entries).toHaveLength(LIMITS.activityLogMax);
    expect(messages(s)).not.toContain('too old');
    s = add(s, 'newest', new Date(Date.UTC(2025, 0, 2)).toISOString());
    expect(messages(s)[0]).toBe('newest');
    expect(messages(s)).not.toContain('line 0');
  });
});
