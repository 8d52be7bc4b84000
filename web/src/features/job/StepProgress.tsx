import { useEffect, useState } from 'react';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { senderReset } from '../sender/slice.js';
import { isTerminal, jobReset, selectCanGoBack, selectJob } from './slice.js';
import { cancelJob } from './thunks.js';

const STATUS_LABEL = { queued: 'Queued', running: 'Sending', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled' } as const;

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

const time = (iso: string) => new Date(iso).toLocaleTimeString();

/** Step 3: counters, the countdown to the next message, the bar, both result lists, Cancel and Go Back. */
export function StepProgress() {
  const dispatch = useAppDispatch();
  const job = useAppSelector(selectJob);
  const canGoBack = useAppSelector(selectCanGoBack);
  const seconds = useSecondsUntil(job.status === 'running' || job.status === 'queued' ? job.nextSendAt : null);
  const { total, sent, failed } = job.progress;
  const done = sent + failed;
  const percent = total > 0 ? Math.round((done / total) * 100) : 0;
  const active = job.phase === 'starting' || !isTerminal(job.status);

  return (
    <section className="card step" aria-labelledby="step3-title">
      <div className="card-title-row">
        <h2 id="step3-title">
          <span className="step-number">3</span> Send Messages
        </h2>
        {job.status && <span className={`status-pill status-${job.status}`}>{STATUS_LABEL[job.status]}</span>}
        {job.phase === 'starting' && <span className="status-pill status-queued">Starting…</span>}
      </div>

      <div className="counters">
        <Counter testId="count-total" value={total} label="Total" />
        <Counter testId="count-sent" value={sent} label="Sent" tone="success" />
        <Counter testId="count-failed" value={failed} label="Failed" tone="failed" />
        <Counter testId="count-percent" value={`${percent}%`} label="Complete" />
      </div>

      {active && (
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
      <div className="progress" role="progressbar" aria-label="Sending progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div className="progress-bar" style={{ width: `${percent}%` }} />
      </div>
      {job.error && job.status === 'failed' && (
        <p className="field-error" role="alert">
          {job.error}
        </p>
      )}
      {!job.monitoring && job.phase === 'progress' && !isTerminal(job.status) && (
        <p className="notice notice-warning">Progress is no longer being followed; refresh the page to check the job.</p>
      )}

      <div className="results-grid">
        <div>
          <h3>Successful ({job.results.successList.length})</h3>
          <ul className="result-list success" aria-label="Successful numbers">
            {job.results.successList.map((r) => (
              <li key={`${r.originalNumber}${r.timestamp}`}>
                <span>{r.originalNumber}</span>
                <time dateTime={r.timestamp}>{time(r.timestamp)}</time>
              </li>
            ))}
          </ul>
        </div>
        <div>
          <h3>Failed ({job.results.failedList.length})</h3>
          <ul className="result-list failed" aria-label="Failed numbers">
            {job.results.failedList.map((r) => (
              <li key={`${r.phoneNumber}${r.timestamp}`}>
                <span>{r.phoneNumber}</span>
                {r.error && <span className="muted small">{r.error}</span>}
                <time dateTime={r.timestamp}>{time(r.timestamp)}</time>
              </li>
            ))}
          </ul>
        </div>
      </div>

      <div className="button-row end">
        {active && job.phase === 'progress' && (
          <button type="button" className="button danger" onClick={() => void dispatch(cancelJob())}>
            Cancel
          </button>
        )}
        <button
          type="button"
          className="button secondary"
          disabled={!canGoBack}
          onClick={() => {
            // SPEC §4.5: Go Back resets everything.
            dispatch(jobReset());
            dispatch(senderReset());
          }}
        >
          Go Back
        </button>
      </div>
    </section>
  );
}

function Counter({ testId, value, label, tone }: { testId: string; value: number | string; label: string; tone?: 'success' | 'failed' }) {
  return (
    <div className={tone ? `counter counter-${tone}` : 'counter'}>
      <span className="counter-value" data-testid={testId}>
        {value}
      </span>
      <span className="counter-label">{label}</span>
    </div>
  );
}
