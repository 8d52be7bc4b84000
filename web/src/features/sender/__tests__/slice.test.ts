import { describe, expect, it } from 'vitest';
import { LIMITS } from '@bns/contracts';
import { activitySlice, logAdded } from '../../activity/slice.js';
import {
  hasVariables,
  initialSenderState,
  mergeColumnsInSlices,
  missingValuesFilled,
  missingValuesOf,
  numberRemoved,
  numbersAdded,
  numbersCleared,
  numbersRemoved,
  recipientColumnsImported,
  recipientsImported,
  recipientsMerged,
  recipientsOf,
  senderSlice,
  templateLoaded,
  type SenderState,
} from '../slice.js';

const reduce = (...actions: Parameters<typeof senderSlice.reducer>[1][]): SenderState =>
  actions.reduce((s, a) => senderSlice.reducer(s, a), initialSenderState);

describe('sender slice', () => {
  it('merges duplicates when numbers are added again', () => {
    expect(reduce(numbersAdded(['91234567', '61234567']), numbersAdded(['61234567', '51234567'])).phoneNumbers).toEqual(
      ['91234567', '61234567', '51234567'],
    );
  });

  it('imports recipients with variables; removing or clearing drops their variables too', () => {
    const s = reduce(
      numbersAdded(['91234567']),
      recipientsImported([{ phone: '61234567', variables: { name: 'Ann' } }]),
    );
    expect(hasVariables(s)).toBe(true);
    expect(recipientsOf(s)).toEqual([
      { phone: '91234567', variables: {} },
      { phone: '61234567', variables: { name: 'Ann' } },
    ]);
    expect(hasVariables(senderSlice.reducer(s, numberRemoved('61234567')))).toBe(false);
    expect(senderSlice.reducer(s, numbersCleared())).toMatchObject({ phoneNumbers: [], variables: {} });
  });

  it('lists recipients without a value for a placeholder by their sheet row, and sends that row', () => {
    const s = reduce(
      numbersAdded(['51234567']),
      recipientsImported([
        { phone: '91234567', variables: { name: 'Ann', shop: 'TST' }, row: 2 },
        { phone: '61234567', variables: { name: ' ' }, row: 4 },
      ]),
    );
    expect(missingValuesOf(s, ['name', 'shop'])).toEqual([
      { phone: '51234567', names: ['name', 'shop'] },
      { phone: '61234567', row: 4, names: ['name', 'shop'] },
    ]);
    expect(missingValuesOf(s, [])).toEqual([]);
    expect(recipientsOf(s)[2]).toEqual({ phone: '61234567', variables: { name: ' ' }, row: 4 });

    const filled = senderSlice.reducer(
      s,
      missingValuesFilled({ phones: ['51234567', '61234567'], names: ['name', 'shop'], value: 'friend' }),
    );
    expect(missingValuesOf(filled, ['name', 'shop'])).toEqual([]);
    expect(filled.variables['91234567']).toEqual({ name: 'Ann', shop: 'TST' });
    expect(filled.variables['61234567']).toEqual({ name: 'friend', shop: 'friend' });

    const others = senderSlice.reducer(s, numbersRemoved(['51234567', '61234567']));
    expect(others.phoneNumbers).toEqual(['91234567']);
    expect(others.rows).toEqual({ '91234567': 2 });
  });

  it('takes a value of only invisible characters for no value, as the server does', () => {
    const s = reduce(
      recipientsImported([
        { phone: '91234567', variables: { name: '\u200b\u2060' }, row: 2 },
        { phone: '61234567', variables: { name: 'A\u200bnn' }, row: 3 },
      ]),
    );
    expect(missingValuesOf(s, ['name'])).toEqual([{ phone: '91234567', row: 2, names: ['name'] }]);
  });

  it('a template replaces message and numbers', () => {
    const s = reduce(
      numbersAdded(['91234567']),
      templateLoaded({ message: 'Hi', phoneNumbers: ['61234567', '61234567'] }),
    );
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
    const line = {
      type: 'success' as const,
      message: 'Sent to 91234567',
      timestamp: '2025-01-01T00:00:00Z',
      key: 'j1|2025-01-01T00:00:00Z|Sent to 91234567',
    };
    s = activitySlice.reducer(s, logAdded(line));
    s = activitySlice.reducer(s, logAdded(line));
    expect(s.entries).toHaveLength(1);
  });
});

describe('recipientColumnsImported', () => {
  it('adds a file handed over by column: variables without blanks, rows, duplicates merged', () => {
    const s0 = senderSlice.reducer(initialSenderState, numbersAdded(['91230001']));
    const s1 = senderSlice.reducer(
      s0,
      recipientColumnsImported({
        phones: ['91230001', '91230002'],
        rows: [2, 3],
        names: ['name', 'shop'],
        values: [
          ['Ann', 'Ben'],
          ['', 'TST'],
        ],
      }),
    );
    expect(s1.phoneNumbers).toEqual(['91230001', '91230002']);
    expect(s1.variables).toEqual({ '91230001': { name: 'Ann' }, '91230002': { name: 'Ben', shop: 'TST' } });
    expect(s1.rows).toEqual({ '91230001': 2, '91230002': 3 });
    // Later edits still work on what was frozen on the way in.
    const s2 = senderSlice.reducer(s1, missingValuesFilled({ phones: ['91230001'], names: ['shop'], value: 'MK' }));
    expect(s2.variables['91230001']).toEqual({ name: 'Ann', shop: 'MK' });
    expect(senderSlice.reducer(s2, numberRemoved('91230001')).phoneNumbers).toEqual(['91230002']);
  });
});

describe('mergeColumnsInSlices and recipientsMerged', () => {
  const columns = (n: number, from = 0) => ({
    phones: Array.from({ length: n }, (_, i) => String(60000000 + from + i)),
    rows: Array.from({ length: n }, (_, i) => i + 2),
    names: ['name'],
    values: [Array.from({ length: n }, (_, i) => (i % 2 ? `C${from + i}` : ''))],
  });

  it('merges a large file a slice at a time, yielding to the page, and the store takes the lists whole', async () => {
    const s0 = senderSlice.reducer(initialSenderState, numbersAdded(['91230001', '60000001']));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const merged = await mergeColumnsInSlices(s0, columns(25_000));
    clearInterval(timer);
    // The page ran between slices (25,000 recipients are three slices).
    expect(ticks).toBeGreaterThan(0);
    const s1 = senderSlice.reducer(s0, recipientsMerged(merged));
    expect(s1.phoneNumbers).toHaveLength(25_001);
    expect(s1.phoneNumbers.slice(0, 3)).toEqual(['91230001', '60000001', '60000000']);
    expect(s1.variables['60000001']).toEqual({ name: 'C1' });
    expect(s1.variables['60000000']).toEqual({});
    expect(s1.rows['60000002']).toBe(4);
    expect(s1.phoneNumbers).toBe(merged.merged.phoneNumbers);
  });

  it('merges again into what is there when the numbers changed during the merge', async () => {
    const s0 = senderSlice.reducer(initialSenderState, numbersAdded(['91230001']));
    const merged = await mergeColumnsInSlices(s0, columns(3));
    const changed = senderSlice.reducer(s0, numbersAdded(['91230002']));
    const s1 = senderSlice.reducer(changed, recipientsMerged(merged));
    expect(s1.phoneNumbers).toEqual(['91230001', '91230002', '60000000', '60000001', '60000002']);
    expect(s1.variables['60000001']).toEqual({ name: 'C1' });
  });
});
