import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import type { JobProgress, JobStatus, PausedReason } from '@bns/contracts';
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
  /** Sending policy: why the job waits, until when, and a scheduled start. */
  pausedReason: PausedReason | null;
  resumesAt: string | null;
  startAt: string | null;
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
  pausedReason: null,
  resumesAt: null,
  startAt: null,
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
    /**
     * After a reload or a new sign-in: a job of this user is still active on the server (found in its
     * job list), so the progress view follows it again instead of an empty Step 1. Only a tab with
     * nothing on screen takes it.
     */
    activeJobFound(s, a: PayloadAction<{ jobId: string; status: JobStatus; progress: JobProgress }>) {
      if (s.phase !== 'setup' || s.jobId !== null) return;
      s.phase = 'progress';
      s.jobId = a.payload.jobId;
      s.status = a.payload.status;
      s.progress = a.payload.progress;
      s.results = { successList: [], failedList: [] };
      s.estimatedTime = null;
      s.error = null;
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
      s.pausedReason = job.pausedReason ?? null;
      s.resumesAt = job.resumesAt ?? null;
      s.startAt = job.startAt ?? null;
      s.error = job.error ?? null;
      if (!wasTerminal) settle(s, job.status);
    },
    /** The socket's job_progress: counters and the countdown at once, the lists come with the next status. */
    jobProgressEvent(
      s,
      a: PayloadAction<{ jobId: string; status: JobStatus; progress: JobProgress; nextSendAt?: string | null }>,
    ) {
      if (a.payload.jobId !== s.jobId || isTerminal(s.status)) return;
      s.status = a.payload.status;
      // opt-outs: a progress event carries `skipped` only when some were; one without it keeps the count last seen
      s.progress = {
        ...a.payload.progress,
        ...(a.payload.progress.skipped === undefined && s.progress.skipped ? { skipped: s.progress.skipped } : {}),
      };
      if (a.payload.nextSendAt !== undefined) s.nextSendAt = a.payload.nextSendAt;
      settle(s, a.payload.status);
    },
    monitoringStopped(s) {
      s.monitoring = false;
    },
    /** "Resume monitoring": follow the same job again after polling gave up. */
    monitoringResumed(s) {
      if (s.phase === 'progress' && s.jobId !== null && !isTerminal(s.status)) s.monitoring = true;
    },
    donationPromptClosed(s) {
      s.donationPromptOpen = false;
    },
    /**
     * Go Back: allowed only when nothing is in progress (the button is disabled otherwise). A job whose
     * monitoring stopped is still in progress as far as the server last said: going back then would let
     * a second job queue behind it unseen.
     */
    jobReset(s) {
      if (s.phase === 'starting' || (s.phase === 'progress' && !isTerminal(s.status))) return;
      const { donationPromptShown } = s;
      return { ...initialJobState, donationPromptShown };
    },
  },
  selectors: {
    selectJob: (s) => s,
    selectJobInProgress: (s) => s.phase === 'starting' || (s.phase === 'progress' && !isTerminal(s.status)),
    /** Go Back is allowed once the server said the job ended (SPEC §4.5). */
    selectCanGoBack: (s) => s.phase === 'progress' && isTerminal(s.status),
    /** Monitoring gave up while the job was still active: offer to resume it. */
    selectCanResumeMonitoring: (s) => s.phase === 'progress' && !s.monitoring && !isTerminal(s.status),
  },
});

export const {
  jobStartRequested,
  jobStarted,
  activeJobFound,
  jobStartFailed,
  jobStatusReceived,
  jobProgressEvent,
  monitoringStopped,
  monitoringResumed,
  donationPromptClosed,
  jobReset,
} = jobSlice.actions;
export const { selectJob, selectJobInProgress, selectCanGoBack, selectCanResumeMonitoring } = jobSlice.selectors;
