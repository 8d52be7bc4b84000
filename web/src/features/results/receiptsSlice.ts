import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import type { MessageStatus } from '@bns/contracts';
import { activeJobFound, jobReset, jobStarted } from '../job/slice.js';

/** Receipts of the job on screen, as the socket's `message_status` reports them (each number counted once). */
export interface ReceiptsState {
  jobId: string | null;
  delivered: Record<string, true>;
  read: Record<string, true>;
}

const initialState: ReceiptsState = { jobId: null, delivered: {}, read: {} };

export const receiptsSlice = createSlice({
  name: 'receipts',
  initialState,
  reducers: {
    messageStatusReceived(s, a: PayloadAction<{ jobId?: string; recipient?: string; status?: MessageStatus }>) {
      const { jobId, recipient, status } = a.payload ?? {};
      if (!jobId || jobId !== s.jobId || typeof recipient !== 'string') return;
      // A read message was delivered, whatever order the acks arrived in.
      if (status === 'delivered' || status === 'read') s.delivered[recipient] = true;
      if (status === 'read') s.read[recipient] = true;
    },
  },
  extraReducers: (b) => {
    b.addCase(jobStarted, (_s, a) => ({ jobId: a.payload.jobId, delivered: {}, read: {} }));
    // A job picked up after a reload: its receipts so far come from the server's counts.
    b.addCase(activeJobFound, (s, a) => (s.jobId === null ? { jobId: a.payload.jobId, delivered: {}, read: {} } : s));
    b.addCase(jobReset, () => initialState);
  },
  selectors: {
    selectLiveReceipts: (s) => ({
      jobId: s.jobId,
      delivered: Object.keys(s.delivered).length,
      read: Object.keys(s.read).length,
    }),
  },
});

export const { messageStatusReceived } = receiptsSlice.actions;
export const { selectLiveReceipts } = receiptsSlice.selectors;
