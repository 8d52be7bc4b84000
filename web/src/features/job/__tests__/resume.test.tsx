import { act, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WEB_MESSAGES, type JobHistoryItem } from '@bns/contracts';
import type { JobView } from '../../../api/types.js';
import { makeStore } from '../../../app/store.js';
import { connectedState, fakeFetch, renderWithProviders, TEST_USER } from '../../../test/renderWithProviders.js';
import { sessionReady } from '../../connection/slice.js';
import { SendTab } from '../../sender/SendTab.js';
import { activeJobOf, resumeActiveJob } from '../thunks.js';

const item = (over: Partial<JobHistoryItem>): JobHistoryItem => ({
  jobId: 'job-1',
  status: 'completed',
  createdAt: '2025-01-01T00:00:00.000Z',
  startedAt: '2025-01-01T00:00:01.000Z',
  finishedAt: null,
  progress: { total: 10, sent: 3, failed: 0 },
  receipts: { delivered: 0, read: 0, replied: 0 },
  messagePreview: 'Hello',
  message: 'Hello',
  personalised: false,
  detailsPurgedAfterDays: null,
  ...over,
});

const view = (over: Partial<JobView>): JobView => ({
  jobId: 'job-run',
  status: 'running',
  progress: { total: 10, sent: 4, failed: 0 },
  results: { successList: [], failedList: [] },
  error: null,
  estimatedTime: 1,
  nextSendAt: null,
  createdAt: '2025-01-01T00:00:00.000Z',
  startedAt: '2025-01-01T00:00:01.000Z',
  finishedAt: null,
  ...over,
});

afterEach(() => vi.unstubAllGlobals());

describe('after a reload', () => {
  it('picks the job to follow: one sending before one paused, queued or scheduled; the newest of a kind', () => {
    expect(activeJobOf([item({ jobId: 'a' }), item({ jobId: 'b', status: 'cancelled' })])).toBeUndefined();
    expect(
      activeJobOf([item({ jobId: 'sched', status: 'scheduled' }), item({ jobId: 'run', status: 'running' })])?.jobId,
    ).toBe('run');
    expect(
      activeJobOf([item({ jobId: 'new', status: 'paused' }), item({ jobId: 'old', status: 'paused' })])?.jobId,
    ).toBe('new');
  });

  it('shows the running job in Step 3 with its counters and earlier log lines, and follows it', async () => {
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/jobs/user_test_1') {
        // Asked for the unfinished jobs only: the running one, however many finished jobs came after it.
        if (url.searchParams.get('active') !== 'true') {
          return {
            body: {
              success: true,
              jobs: Array.from({ length: 20 }, (_, i) => item({ jobId: `done-${i}` })),
              nextCursor: 'done-19',
            },
          };
        }
        return {
          body: {
            success: true,
            jobs: [item({ jobId: 'job-run', status: 'running', progress: { total: 10, sent: 3, failed: 0 } })],
            nextCursor: null,
          },
        };
      }
      if (url.pathname === '/job-status/job-run') return { body: { success: true, job: view({}) } };
      if (url.pathname === '/job-logs/job-run')
        return {
          body: {
            success: true,
            logs: [{ type: 'info', message: 'Job started: 10 recipients', timestamp: '2025-01-01T00:00:01.000Z' }],
          },
        };
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    expect(screen.getByRole('heading', { name: /Create message/ })).toBeTruthy();

    await act(() => store.dispatch(resumeActiveJob()));
    expect(screen.getByRole('heading', { name: /Send Messages/ })).toBeTruthy();
    expect(screen.queryByRole('heading', { name: /Create message/ })).toBeNull();
    expect(store.getState().job).toMatchObject({ phase: 'progress', jobId: 'job-run', monitoring: true });
    // The monitor's first status fetch brings the counters up to date.
    await waitFor(() => expect(screen.getByTestId('count-sent').textContent).toBe('4'));
    await waitFor(() =>
      expect(store.getState().activity.entries.some((e) => e.message === 'Job started: 10 recipients')).toBe(true),
    );
    expect((screen.getByRole('button', { name: 'Go Back' }) as HTMLButtonElement).disabled).toBe(true);
    store.listener.clearListeners();
  });

  it('leaves Step 1 alone when no job is active, or when a send started meanwhile', async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/user_test_1'
        ? { body: { success: true, jobs: [item({ status: 'completed' })], nextCursor: null } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    const store = makeStore({ session: TEST_USER });
    await store.dispatch(resumeActiveJob());
    expect(store.getState().job.phase).toBe('setup');
    store.listener.clearListeners();
  });

  it('logs "WhatsApp connected" once when the ack and the exist event both say so', () => {
    const store = makeStore({ session: TEST_USER });
    store.dispatch(sessionReady({ id: 's', phoneNumber: '85291234567' }));
    store.dispatch(sessionReady({ id: 's', phoneNumber: '85291234567' }));
    expect(store.getState().activity.entries.filter((e) => e.message === WEB_MESSAGES.whatsappConnected)).toHaveLength(
      1,
    );
    store.listener.clearListeners();
  });
});
