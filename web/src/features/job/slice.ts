import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import type { JobProgress, JobStatus } from '@bns/contracts';
import type { JobView } from '../../api/types.js';

type JobResults = JobView['results'];

/** setup → starting (the start call is out) → progress (Step 3 replaces the setup). */
export type JobPhase = 'setup' | 'starting' | 'progress';

export interface JobState {
  phase: JobPhase;
  jobId: string | null;
  status: JobStatus | null;
  progress: JobProgress;
  results: JobResults;
  nextSendAt: string | null;
  estimatedTime: number | null;
  error: string | null;
  /** False once polling gave up (429 or a failed fetch). */
  monitoring: boolean;
  /** The donation prompt shows once per page session, after the first completed job. */
  donationPromptOpen: boolean;
  donationPromptShown: boolean;
}

export const initialJobState: JobState = {
  phase: 'setup',
  jobId: null,
  status: null,
  progress: { total: 0, sent: 0, failed: 0 },
  results: { successList: [], failedList: [] },
  nextSendAt: null,
  estimatedTime: null,
  error: null,
  monitoring: false,
  donationPromptOpen: false,
  donationPromptShown: false,
};

export const TERMINAL: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (status: JobStatus | null): boolean => status !== null && TERMINAL.includes(status);

function settle(s: JobState, status: JobStatus): void {
  if (status === 'completed' && !s.donationPromptShown) {
    s.donationPromptOpen = true;
    s.donationPromptShown = true;
  }
  if (isTerminal(status)) s.nextSendAt = null;
}

export const jobSlice = createSlice({
  name: 'job',
  initialState: initialJobState,
  reducers: {
    jobStartRequested(s, a: PayloadAction<{ total: number }>) {
      s.phase = 'starting';
      s.progress = { total: a.payload.total, sent: 0, failed: 0 };
      s.results = { successList: [], failedList: [] };
      s.error = null;
    },
    jobStarted(s, a: PayloadAction<{ jobId: string; estimatedTime: number; total: number }>) {
      s.phase = 'progress';
      s.jobId = a.payload.jobId;
      s.status = 'queued';
      s.estimatedTime = a.payload.estimatedTime;
      s.progress = { total: a.payload.total, sent: 0, failed: 0 };
      s.monitoring = true;
    },
    /** SPEC §8: a start failure resets the progress. */
    jobStartFailed(s) {
      const { donationPromptShown } = s;
      return { ...initialJobState, donationPromptShown };
    },
    jobStatusReceived(s, a: PayloadAction<JobView>) {
      const job = a.payload;
      if (job.jobId !== s.jobId) return;
      const wasTerminal = isTerminal(s.status);
      s.status = job.status;
      s.progress = job.progress;
      s.results = job.results ?? s.results;
      s.nextSendAt = job.nextSendAt ?? null;
      s.error = job.error ?? null;
      if (!wasTerminal) settle(s, job.status);
    },
    /** The socket's job_progress: counters and the countdown at once, the lists come with the next status. */
    jobProgressEvent(s, a: PayloadAction<{ jobId: string; status: JobStatus; progress: JobProgress; nextSendAt?: string | null }>) {
      if (a.payload.jobId !== s.jobId || isTerminal(s.status)) return;
      s.status = a.payload.status;
      s.progress = a.payload.progress;
      if (a.payload.nextSendAt !== undefined) s.nextSendAt = a.payload.nextSendAt;
      settle(s, a.payload.status);
    },
    monitoringStopped(s) {
      s.monitoring = false;
    },
    donationPromptClosed(s) {
      s.donationPromptOpen = false;
    },
    /** Go Back: allowed only when nothing is in progress (the button is disabled otherwise). */
    jobReset(s) {
      if (s.phase === 'starting' || (s.phase === 'progress' && !isTerminal(s.status) && s.monitoring)) return;
      const { donationPromptShown } = s;
      return { ...initialJobState, donationPromptShown };
    },
  },
  selectors: {
    selectJob: (s) => s,
    selectJobInProgress: (s) => s.phase === 'starting' || (s.phase === 'progress' && !isTerminal(s.status)),
    /** Go Back is allowed when nothing is in progress, or when nothing is being followed any more. */
    selectCanGoBack: (s) => s.phase === 'progress' && (isTerminal(s.status) || !s.monitoring),
  },
});

export const { jobStartRequested, jobStarted, jobStartFailed, jobStatusReceived, jobProgressEvent, monitoringStopped, donationPromptClosed, jobReset } =
  jobSlice.actions;
export const { selectJob, selectJobInProgress, selectCanGoBack } = jobSlice.selectors;
