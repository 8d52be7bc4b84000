import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { JobView } from '../../../api/types.js';
import { initialJobState, jobProgressEvent, jobSlice, jobStarted, jobStatusReceived } from '../../job/slice.js';
import { SkippedList } from '../SkippedList.js';

const view = (skipped: number): JobView => ({
  jobId: 'j1',
  status: 'running',
  progress: { total: 4, sent: 1, failed: 0, skipped },
  results: {
    successList: [],
    failedList: [],
    skippedList: (
      [
        { phoneNumber: '91234567', reason: 'opted_out', timestamp: '2025-01-01T00:00:00Z' },
        { phoneNumber: '61234567', reason: 'not_on_whatsapp', timestamp: '2025-01-01T00:00:01Z' },
      ] as const
    ).slice(0, skipped),
  },
  nextSendAt: null,
  error: null,
  estimatedTime: 1,
  createdAt: '2025-01-01T00:00:00Z',
  startedAt: null,
  finishedAt: null,
});

describe('skipped recipients in the progress view', () => {
  it('lists each skipped number with its reason', () => {
    render(<SkippedList entries={view(2).results.skippedList} />);
    const list = screen.getByRole('list', { name: 'Skipped numbers' });
    expect(screen.getByText('Skipped (2)')).toBeTruthy();
    expect(within(list).getByText('91234567').parentElement?.textContent).toContain('opted out');
    expect(within(list).getByText('61234567').parentElement?.textContent).toContain('not on WhatsApp');
  });

  it('shows nothing when no recipient was skipped', () => {
    const { container } = render(<SkippedList entries={[]} />);
    expect(container.textContent).toBe('');
  });

  it('a progress event without a skipped count keeps the one the last status gave', () => {
    let s = jobSlice.reducer(initialJobState, jobStarted({ jobId: 'j1', estimatedTime: 1, total: 4 }));
    s = jobSlice.reducer(s, jobStatusReceived(view(2)));
    s = jobSlice.reducer(
      s,
      jobProgressEvent({ jobId: 'j1', status: 'running', progress: { total: 4, sent: 2, failed: 0 } }),
    );
    expect(s.progress).toEqual({ total: 4, sent: 2, failed: 0, skipped: 2 });
  });
});
