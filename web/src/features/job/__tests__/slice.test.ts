import { describe, expect, it } from 'vitest';
import type { JobView } from '../../../api/types.js';
import {
  donationPromptClosed,
  initialJobState,
  jobProgressEvent,
  jobReset,
  jobSlice,
  jobStarted,
  jobStartFailed,
  jobStartRequested,
  jobStatusReceived,
  monitoringResumed,
  monitoringStopped,
  type JobState,
} from '../slice.js';

const reduce = (s: JobState, ...actions: Parameters<typeof jobSlice.reducer>[1][]) =>
  actions.reduce((x, a) => jobSlice.reducer(x, a), s);
const view = (status: JobView['status'], sent: number, failed = 0): JobView => ({
  jobId: 'j1',
  status,
  progress: { total: 3, sent, failed },
  results: {
    successList: Array.from({ length: sent }, (_, i) => ({
      originalNumber: `9123456${i}`,
      timestamp: '2025-01-01T00:00:00Z',
    })),
    failedList: [],
  },
  nextSendAt: status === 'running' ? '2025-01-01T00:00:04Z' : null,
  error: null,
  estimatedTime: 1,
  createdAt: '2025-01-01T00:00:00Z',
  startedAt: null,
  finishedAt: null,
});
const started = () =>
  reduce(initialJobState, jobStartRequested({ total: 3 }), jobStarted({ jobId: 'j1', estimatedTime: 1, total: 3 }));
const select = (s: JobState) => jobSlice.getSelectors().selectCanGoBack(s);
const canResume = (s: JobState) => jobSlice.getSelectors().selectCanResumeMonitoring(s);
const inProgress = (s: JobState) => jobSlice.getSelectors().selectJobInProgress(s);

describe('job slice (SPEC §4 Bulk send)', () => {
  it('setup → starting → progress; a start failure resets progress', () => {
    const starting = reduce(initialJobState, jobStartRequested({ total: 3 }));
    expect(starting.phase).toBe('starting');
    expect(inProgress(starting)).toBe(true);
    expect(reduce(starting, jobStartFailed()).phase).toBe('setup');
    expect(started()).toMatchObject({ phase: 'progress', jobId: 'j1', status: 'queued', monitoring: true });
  });

  it('takes counters from socket progress and lists from status; ignores other jobs', () => {
    const s = reduce(
      started(),
      jobProgressEvent({ jobId: 'j1', status: 'running', progress: { total: 3, sent: 1, failed: 0 }, nextSendAt: 'x' }),
    );
    expect(s.progress.sent).toBe(1);
    expect(s.nextSendAt).toBe('x');
    expect(
      reduce(s, jobProgressEvent({ jobId: 'other', status: 'completed', progress: { total: 9, sent: 9, failed: 0 } }))
        .progress.total,
    ).toBe(3);
    const withLists = reduce(s, jobStatusReceived(view('running', 2)));
    expect(withLists.results.successList).toHaveLength(2);
  });

  it('Go Back is refused while sending and allowed once the job ended', () => {
    const running = reduce(started(), jobStatusReceived(view('running', 1)));
    expect(select(running)).toBe(false);
    expect(reduce(running, jobReset()).phase).toBe('progress');
    const done = reduce(running, jobStatusReceived(view('completed', 3)));
    expect(select(done)).toBe(true);
    expect(reduce(done, jobReset())).toMatchObject({ phase: 'setup', jobId: null });
  });

  it('after monitoring stopped, Go Back stays refused while the server last said the job is active; Resume monitoring is offered', () => {
    const stopped = reduce(started(), jobStatusReceived(view('running', 1)), monitoringStopped());
    expect(select(stopped)).toBe(false);
    expect(reduce(stopped, jobReset()).phase).toBe('progress');
    expect(canResume(stopped)).toBe(true);
    const resumed = reduce(stopped, monitoringResumed());
    expect(resumed.monitoring).toBe(true);
    expect(canResume(resumed)).toBe(false);
    // A socket event or a later status that says the job ended enables Go Back again.
    const ended = reduce(
      stopped,
      jobProgressEvent({ jobId: 'j1', status: 'completed', progress: { total: 3, sent: 3, failed: 0 } }),
    );
    expect(select(ended)).toBe(true);
    expect(canResume(ended)).toBe(false);
  });

  it('shows the donation prompt once, after the first completed job only', () => {
    const done = reduce(started(), jobStatusReceived(view('completed', 3)));
    expect(done.donationPromptOpen).toBe(true);
    const closed = reduce(done, donationPromptClosed(), jobReset());
    const again = reduce(
      closed,
      jobStartRequested({ total: 3 }),
      jobStarted({ jobId: 'j1', estimatedTime: 1, total: 3 }),
      jobStatusReceived(view('completed', 3)),
    );
    expect(again.donationPromptOpen).toBe(false);
  });

  it('a failed or cancelled job shows no donation prompt', () => {
    expect(
      reduce(started(), jobStatusReceived({ ...view('failed', 0), error: 'WhatsApp unlinked' })).donationPromptOpen,
    ).toBe(false);
    expect(reduce(started(), jobStatusReceived(view('cancelled', 1))).donationPromptOpen).toBe(false);
  });
});
