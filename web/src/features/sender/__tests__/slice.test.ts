import { describe, expect, it } from 'vitest';
import { LIMITS } from '@bns/contracts';
import { activitySlice, logAdded } from '../../activity/slice.js';
import {
  hasVariables,
  initialSenderState,
  numberRemoved,
  numbersAdded,
  numbersCleared,
  recipientsImported,
  recipientsOf,
  senderSlice,
  templateLoaded,
  type SenderState,
} from '../slice.js';

const reduce = (...actions: Parameters<typeof senderSlice.reducer>[1][]): SenderState =>
  actions.reduce((s, a) => senderSlice.reducer(s, a), initialSenderState);

describe('sender slice', () => {
  it('merges duplicates when numbers are added again', () => {
    expect(reduce(numbersAdded(['91234567', '61234567']), numbersAdded(['61234567', '51234567'])).phoneNumbers).toEqual([
      '91234567',
      '61234567',
      '51234567',
    ]);
  });

  it('imports recipients with variables; removing or clearing drops their variables too', () => {
    const s = reduce(numbersAdded(['91234567']), recipientsImported([{ phone: '61234567', variables: { name: 'Ann' } }]));
    expect(hasVariables(s)).toBe(true);
    expect(recipientsOf(s)).toEqual([
      { phone: '91234567', variables: {} },
      { phone: '61234567', variables: { name: 'Ann' } },
    ]);
    expect(hasVariables(senderSlice.reducer(s, numberRemoved('61234567')))).toBe(false);
    expect(senderSlice.reducer(s, numbersCleared())).toMatchObject({ phoneNumbers: [], variables: {} });
  });

  it('a template replaces message and numbers', () => {
    const s = reduce(numbersAdded(['91234567']), templateLoaded({ message: 'Hi', phoneNumbers: ['61234567', '61234567'] }));
    expect(s).toMatchObject({ message: 'Hi', phoneNumbers: ['61234567'], variables: {} });
  });
});

describe('activity slice', () => {
  it('keeps the newest 100 entries, newest first', () => {
    let s = activitySlice.reducer(undefined, { type: 'init' });
    for (let i = 0; i < 120; i++) s = activitySlice.reducer(s, logAdded({ type: 'info', message: `m${i}` }));
    expect(s.entries).toHaveLength(LIMITS.activityLogMax);
    expect(s.entries[0]!.message).toBe('m119');
    expect(s.entries[99]!.message).toBe('m20');
  });

  it('shows a job log line once even when both the socket and polling deliver it', () => {
    let s = activitySlice.reducer(undefined, { type: 'init' });
    const line = { type: 'success' as const, message: 'Sent to 91234567', timestamp: '2025-01-01T00:00:00Z', key: 'j1|2025-01-01T00:00:00Z|Sent to 91234567' };
    s = activitySlice.reducer(s, logAdded(line));
    s = activitySlice.reducer(s, logAdded(line));
    expect(s.entries).toHaveLength(1);
  });
});
