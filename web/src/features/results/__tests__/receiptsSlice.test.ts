import { describe, expect, it } from 'vitest';
import { jobStarted } from '../../job/slice.js';
import { messageStatusReceived, receiptsSlice, selectLiveReceipts } from '../receiptsSlice.js';

const reduce = receiptsSlice.reducer;

describe('live receipts', () => {
  it('counts each number once per receipt, a read also as delivered, only for the job on screen', () => {
    let s = reduce(undefined, jobStarted({ jobId: 'j1', estimatedTime: 1, total: 3 }));
    for (const [recipient, status] of [
      ['91234567', 'delivered'],
      ['91234567', 'delivered'],
      ['91234567', 'read'],
      ['61234567', 'read'],
      ['51234567', 'sent'],
    ] as const) {
      s = reduce(s, messageStatusReceived({ jobId: 'j1', recipient, status }));
    }
    s = reduce(s, messageStatusReceived({ jobId: 'other', recipient: '51234567', status: 'read' }));
    expect(selectLiveReceipts({ receipts: s })).toEqual({ jobId: 'j1', delivered: 2, read: 2 });
    s = reduce(s, jobStarted({ jobId: 'j2', estimatedTime: 1, total: 3 }));
    expect(selectLiveReceipts({ receipts: s })).toEqual({ jobId: 'j2', delivered: 0, read: 0 });
  });
});
