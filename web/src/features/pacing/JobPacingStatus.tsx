import { PAUSED_REASON_TEXT, WEB_MESSAGES } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { connectRequested, selectConnection } from '../connection/slice.js';
import { isTerminal, jobStatusReceived, selectJob, type JobState } from '../job/slice.js';
import { toast } from '../toasts/toasts.js';
import { whenLabel } from './format.js';
import { usePauseJobMutation, useResumeJobMutation } from './pacingApi.js';

/**
 * Whether the progress view counts down to the next message: only while the job is sending. A paused,
 * scheduled or queued job, or one waiting for WhatsApp to be linked again, says why it waits and until
 * when instead (a countdown of 3564 s to a scheduled start, or 5 s while unlinked, told nothing true).
 */
export function countsDown(job: Pick<JobState, 'status' | 'pausedReason'>): boolean {
  return job.status === 'running' && job.pausedReason !== 'unlinked';
}

/** Scheduled and paused states with their reason and when sending goes on, and the Pause / Resume buttons. */
export function JobPacingStatus() {
  const dispatch = useAppDispatch();
  const job = useAppSelector(selectJob);
  const link = useAppSelector(selectConnection).status;
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
  // Paused by the user, or by WhatsApp's refusals to new contacts: only Resume goes on.
  const pausedByUser = job.status === 'paused' && (job.pausedReason === 'user' || job.pausedReason === 'refused');
  const reason = job.pausedReason ? PAUSED_REASON_TEXT[job.pausedReason] : null;
  return (
    <div className="pacing-status" aria-live="polite" data-testid="job-pacing-status">
      {job.status === 'scheduled' && (
        <p className="notice notice-info">
          {job.startAt
            ? `Scheduled: sending starts ${whenLabel(job.startAt)}.`
            : 'Scheduled: sending starts at the chosen time.'}
        </p>
      )}
      {/* Waiting for the phone: nothing resumes by the clock, only when the user links again. */}
      {job.pausedReason === 'unlinked' && (
        <div className="notice notice-warning" data-testid="paused-unlinked">
          <p>
            <strong>{WEB_MESSAGES.pausedUnlinked}</strong>
          </p>
          <p className="small">{WEB_MESSAGES.pausedUnlinkedHint}</p>
          {link !== 'connected' && (
            <button
              type="button"
              className="button primary small"
              disabled={link === 'connecting' || link === 'qr' || link === 'creating'}
              onClick={() => {
                dispatch(connectRequested());
                window.scrollTo?.({ top: 0, behavior: 'smooth' });
              }}
            >
              {WEB_MESSAGES.linkWhatsApp}
            </button>
          )}
        </div>
      )}
      {reason && job.status === 'paused' && job.pausedReason !== 'unlinked' && (
        <p className="notice notice-warning">
          {reason}
          {job.resumesAt
            ? `; sending resumes ${whenLabel(job.resumesAt)}`
            : pausedByUser
              ? '; press Resume to go on'
              : ''}
          .
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
