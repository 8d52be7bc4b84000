import { useState } from 'react';
import { ACCOUNT_MESSAGES, RESULTS_MESSAGES, SUCCESSFUL_RESULT_STATUSES, type JobHistoryItem } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Spinner } from '../../components/Spinner.js';
import { selectUserId } from '../auth/slice.js';
import { FollowUp } from '../contacts/FollowUp.js';
import { selectJobInProgress } from '../job/slice.js';
import { ExportButtons } from '../results/ExportButtons.js';
import { ReceiptsRow } from '../results/ReceiptsRow.js';
import { ReportList } from '../results/ReportList.js';
import { resultsApi, useGetJobHistoryQuery } from '../results/resultsApi.js';
import '../results/results.css';
import { sendAgain } from './thunks.js';

const FAILED = ['failed'] as const;

function CampaignItem({ job }: { job: JobHistoryItem }) {
  const dispatch = useAppDispatch();
  const sending = useAppSelector(selectJobInProgress);
  const [open, setOpen] = useState(false);
  const [loading, setLoading] = useState(false);
  const { total, sent, failed } = job.progress;
  const purgedAfter = job.detailsPurgedAfterDays;
  return (
    <li className="campaign-item" data-testid="campaign">
      <div className="card-title-row">
        {purgedAfter === null ? (
          <strong className="message-content">{job.messagePreview}</strong>
        ) : (
          <em className="muted" data-testid="campaign-details-purged">
            {ACCOUNT_MESSAGES.detailsPurged(purgedAfter)}
          </em>
        )}
        {job.attachment && (
          <span className="attachment-badge" data-testid="campaign-attachment" title="Attachment">
            <span aria-hidden="true">📎</span> {job.attachment.fileName}
          </span>
        )}
        <span className={`status-pill status-${job.status}`}>{job.status}</span>
      </div>
      <p className="muted small">
        <time dateTime={job.createdAt}>{new Date(job.createdAt).toLocaleString()}</time>
        {job.finishedAt && (
          <>
            {' → '}
            <time dateTime={job.finishedAt}>{new Date(job.finishedAt).toLocaleString()}</time>
          </>
        )}
      </p>
      <div className="campaign-counts small">
        <span>Total {total}</span>
        <span>Sent {sent}</span>
        <span>Failed {failed}</span>
        {(job.progress.skipped ?? 0) > 0 && <span data-testid="campaign-skipped">Skipped {job.progress.skipped}</span>}
      </div>
      <ReceiptsRow receipts={job.receipts} />
      {/* The text and the per-recipient results are gone: no report, export or send again to offer. */}
      {purgedAfter === null && (
        <div className="button-row">
          <button type="button" className="button secondary small" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide report' : 'Open report'}
          </button>
          <ExportButtons jobId={job.jobId} />
          <button
            type="button"
            className="button primary small"
            disabled={sending || loading}
            onClick={() => {
              setLoading(true);
              void dispatch(sendAgain(job)).finally(() => setLoading(false));
            }}
          >
            {loading ? 'Loading…' : 'Send again'}
          </button>
          {['completed', 'failed', 'cancelled'].includes(job.status) && <FollowUp job={job} disabled={sending} />}
        </div>
      )}
      {open && purgedAfter === null && (
        <div className="results-grid">
          <ReportList
            jobId={job.jobId}
            statuses={SUCCESSFUL_RESULT_STATUSES}
            count={sent}
            label="Successful"
            tone="success"
          />
          <ReportList jobId={job.jobId} statuses={FAILED} count={failed} label="Failed" tone="failed" />
        </div>
      )}
    </li>
  );
}

/** The Dashboard's Campaigns card: past and current jobs, newest first, a page at a time. */
export function CampaignsCard() {
  const dispatch = useAppDispatch();
  const userId = useAppSelector(selectUserId);
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  // Counts follow the socket on their own; Refresh reads every page shown again (receipts, finish times).
  const { isFetching } = useGetJobHistoryQuery({ userId, cursor: null });
  return (
    <section className="card" aria-labelledby="campaigns-title">
      <div className="card-title-row">
        <h2 id="campaigns-title">{RESULTS_MESSAGES.campaignsTitle}</h2>
        <button
          type="button"
          className="button link small"
          disabled={isFetching}
          onClick={() => dispatch(resultsApi.util.invalidateTags(['JobHistory']))}
        >
          {isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <ul className="campaign-list">
        {cursors.map((cursor, i) => (
          <CampaignPage
            key={cursor ?? 'first'}
            userId={userId}
            cursor={cursor}
            first={i === 0}
            onMore={i === cursors.length - 1 ? (next) => setCursors([...cursors, next]) : undefined}
          />
        ))}
      </ul>
    </section>
  );
}

function CampaignPage({
  userId,
  cursor,
  first,
  onMore,
}: {
  userId: string;
  cursor: string | null;
  first: boolean;
  onMore?: (next: string) => void;
}) {
  const { data, error, isLoading } = useGetJobHistoryQuery({ userId, cursor }, { refetchOnMountOrArgChange: first });
  if (isLoading) return <Spinner label="Loading campaigns…" />;
  if (error || !data)
    return (
      <li className="field-error" role="alert">
        {errorMessage(error)}
      </li>
    );
  return (
    <>
      {first && data.jobs.length === 0 && <li className="muted">{RESULTS_MESSAGES.noCampaigns}</li>}
      {data.jobs.map((job) => (
        <CampaignItem key={job.jobId} job={job} />
      ))}
      {onMore && data.nextCursor && (
        <li>
          <button type="button" className="button link" onClick={() => onMore(data.nextCursor!)}>
            Show more campaigns
          </button>
        </li>
      )}
    </>
  );
}
