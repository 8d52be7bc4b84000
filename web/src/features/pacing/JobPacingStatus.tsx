import { PAUSED_REASON_TEXT } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { isTerminal, jobStatusReceived, selectJob, type JobState } from '../job/slice.js';
import { toast } from '../toasts/toasts.js';
import { whenLabel } from './format.js';
import { usePauseJobMutation, useResumeJobMutation } from './pacingApi.js';

/** The moment the progress view counts down to: the next message, the end of a pause, or a scheduled start. */
export function nextMomentOf(job: Pick<JobState, 'status' | 'nextSendAt' | 'resumesAt' | 'startAt'>): string | null {
  if (job.status === 'scheduled') return job.startAt;
  if (job.status === 'paused') return job.resumesAt;
  if (job.status === 'running' || job.status === 'queued') return job.nextSendAt;
  return null;
}

/** Scheduled and paused states with their reason and when sending goes on, and the Pause / Resume buttons. */
export function JobPacingStatus() {
  const dispatch = useAppDispatch();
  const job = useAppSelector(selectJob);
  const [pause, { isLoading: pausing }] = usePauseJobMutation();
  const [resume, { isLoading: resuming }] = useResumeJobMutation();
  if (!job.jobId || !job.status || isTerminal(job.status)) return null;
  const jobId = job.jobId;
  const act = (call: (id: string) => { unwrap(): Promise<unknown> }) =>
    call(jobId)
      .unwrap()
      .then(
        (view) => dispatch(jobStatusReceived(view as Parameters<typeof jobStatusReceived>[0])),
        (e: unknown) => toast.error(errorMessage(e)),
      );
  const pausedByUser = job.status === 'paused' && job.pausedReason === 'user';
  const reason = job.pausedReason ? PAUSED_REASON_TEXT[job.pausedReason] : null;
  return (
    <div className="pacing-status" aria-live="polite" data-testid="job-pacing-status">
      {job.status === 'scheduled' && job.startAt && <p className="notice">Scheduled: sending starts {whenLabel(job.startAt)}.</p>}
      {reason && (job.status === 'paused' || job.pausedReason === 'unlinked') && (
        <p className="notice notice-warning">
          {reason}
          {job.resumesAt ? `; sending resumes ${whenLabel(job.resumesAt)}` : pausedByUser ? '; press Resume to go on' : ''}.
        </p>
      )}
      {pausedByUser ? (
        <button type="button" className="button primary" disabled={resuming} onClick={() => void act(resume)}>
          Resume
        </button>
      ) : (
        <button type="button" className="button secondary" disabled={pausing} onClick={() => void act(pause)}>
          Pause
        </button>
      )}
    </div>
  );
}
