import { useEffect, useState } from 'react';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Dialog } from '../../components/Dialog.js';
import { senderReset } from '../sender/slice.js';
import { WEB_MESSAGES } from '@bns/contracts';
import {
  isTerminal,
  jobReset,
  monitoringResumed,
  selectCanGoBack,
  selectCanResumeMonitoring,
  selectJob,
} from './slice.js';
import { cancelJob } from './thunks.js';
import { countsDown, JobPacingStatus } from '../pacing/JobPacingStatus.js';
import { selectServerReachable } from '../connection/slice.js';
import { JobResults } from '../results/JobResults.js';
import { SkippedList } from '../optouts/SkippedList.js';

const STATUS_LABEL = {
  queued: 'Queued',
  scheduled: 'Scheduled',
  running: 'Sending',
  paused: 'Paused',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
} as const;

function useSecondsUntil(iso: string | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!iso) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [iso]);
  if (!iso) return null;
  return Math.max(0, Math.ceil((Date.parse(iso) - now) / 1000));
}

/** Step 3: counters, the countdown to the next message, the bar, both result lists, Cancel and Go Back. */
export function StepProgress() {
  const dispatch = useAppDispatch();
  const job = useAppSelector(selectJob);
  const canGoBack = useAppSelector(selectCanGoBack);
  const canResume = useAppSelector(selectCanResumeMonitoring);
  const reachable = useAppSelector(selectServerReachable);
  // No countdown while the server cannot be reached: "Next message in 0s" would be a guess, not a fact.
  const counting = countsDown(job) && reachable;
  const seconds = useSecondsUntil(counting ? job.nextSendAt : null);
  const { total, sent, failed, skipped = 0 } = job.progress;
  // Skipped recipients (opted out, not on WhatsApp) are done too.
  const done = sent + failed + skipped;
  const percent = total > 0 ? Math.round((done / total) * 100) : 0;
  const active = job.phase === 'starting' || !isTerminal(job.status);
  const [confirmingCancel, setConfirmingCancel] = useState(false);

  return (
    <section className="card step" aria-labelledby="step3-title">
      <div className="card-title-row">
        <h2 id="step3-title">
          <span className="step-number">3</span> Send Messages
        </h2>
        {job.status &&
          (job.pausedReason === 'unlinked' && !isTerminal(job.status) ? (
            <span className="status-pill status-paused">Paused</span>
          ) : (
            <span className={`status-pill status-${job.status}`}>{STATUS_LABEL[job.status]}</span>
          ))}
        {job.phase === 'starting' && <span className="status-pill status-queued">Starting…</span>}
      </div>

      <div className="counters">
        <Counter testId="count-total" value={total} label="Total" />
        <Counter testId="count-sent" value={sent} label="Sent" tone="success" />
        <Counter testId="count-failed" value={failed} label="Failed" tone="failed" />
        {skipped > 0 && <Counter testId="count-skipped" value={skipped} label="Skipped" />}
        <Counter testId="count-percent" value={`${percent}%`} label="Complete" />
      </div>

      <JobPacingStatus />
      {counting && (
        <div className="countdown" aria-live="polite">
          {seconds !== null ? (
            <>
              Next message in <strong>{seconds}s</strong>
            </>
          ) : (
            'Preparing the next message…'
          )}
        </div>
      )}
      <div
        className="progress"
        role="progressbar"
        aria-label="Sending progress"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
      >
        <div className="progress-bar" style={{ width: `${percent}%` }} />
      </div>
      {job.error && job.status === 'failed' && (
        <p className="field-error" role="alert">
          {job.error}
        </p>
      )}
      {/* While the server cannot be reached the connection banner says so, and following resumes by itself. */}
      {canResume && reachable && (
        <div className="notice notice-warning" role="status">
          <p>{WEB_MESSAGES.monitoringStoppedNotice}</p>
          <button type="button" className="button secondary small" onClick={() => dispatch(monitoringResumed())}>
            {WEB_MESSAGES.resumeMonitoring}
          </button>
        </div>
      )}

      {/* Campaign results: receipts, the report's lists (virtualised, any size) and Export. */}
      {job.jobId && job.phase === 'progress' ? (
        <JobResults jobId={job.jobId} progress={job.progress} finished={isTerminal(job.status)} />
      ) : null}
      {/* opt-outs: skipped numbers with their reason */}
      <SkippedList entries={job.results.skippedList} />

      <div className="button-row end">
        {active && job.phase === 'progress' && (
          <button type="button" className="button danger" onClick={() => setConfirmingCancel(true)}>
            Cancel
          </button>
        )}
        <button
          type="button"
          className="button secondary"
          disabled={!canGoBack}
          title={canGoBack ? undefined : WEB_MESSAGES.goBackWhileActive}
          onClick={() => {
            // SPEC §4.5: Go Back resets everything.
            dispatch(jobReset());
            dispatch(senderReset());
          }}
        >
          Go Back
        </button>
      </div>
      {/* SPEC has no Cancel of a job: what cannot be undone is confirmed, as a template's delete is. */}
      {confirmingCancel && (
        <Dialog
          title="Cancel job"
          size="small"
          onClose={() => setConfirmingCancel(false)}
          footer={
            <>
              <button type="button" className="button secondary" onClick={() => setConfirmingCancel(false)}>
                Keep sending
              </button>
              <button
                type="button"
                className="button danger"
                onClick={() => {
                  setConfirmingCancel(false);
                  void dispatch(cancelJob());
                }}
              >
                Cancel job
              </button>
            </>
          }
        >
          <p>Cancel this job? Messages not sent yet will not be sent.</p>
        </Dialog>
      )}
    </section>
  );
}

function Counter({
  testId,
  value,
  label,
  tone,
}: {
  testId: string;
  value: number | string;
  label: string;
  tone?: 'success' | 'failed';
}) {
  return (
    <div className={tone ? `counter counter-${tone}` : 'counter'}>
      <span className="counter-value" data-testid={testId}>
        {value}
      </span>
      <span className="counter-label">{label}</span>
    </div>
  );
}
