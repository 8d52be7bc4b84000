import { useEffect, useId, useState } from 'react';
import { shallowEqual } from 'react-redux';
import {
  formatFileSize,
  RECIPIENT_RESULT_STATUSES,
  reportSearchDigits,
  RESULTS_MESSAGES,
  SUCCESSFUL_RESULT_STATUSES,
  type JobProgress,
  type RecipientResult,
} from '@bns/contracts';
import { useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { ExportButtons } from './ExportButtons.js';
import { ReceiptsRow } from './ReceiptsRow.js';
import { RepliesPanel } from './RepliesPanel.js';
import { ReportList } from './ReportList.js';
import { selectLiveReceipts } from './receiptsSlice.js';
import { useGetJobHistoryQuery } from './resultsApi.js';

const FAILED = ['failed'] as const;
const REPLIED = ['replied'] as const;
const SKIPPED = ['skipped'] as const;
/** Typing settles this long before the search goes to the server. */
const SEARCH_DEBOUNCE_MS = 300;

/** What the report shows: both lists, or one status of its own. */
type ReportFilter = 'all' | 'replied' | 'skipped' | 'failed';

/**
 * The progress view's results: receipts (live from the socket, topped up from the server's
 * counts, which also carry replies), the successful and failed numbers paged from the report in
 * virtualised lists, and the export buttons.
 */
export function JobResults({ jobId, progress, finished }: { jobId: string; progress: JobProgress; finished: boolean }) {
  const userId = useAppSelector(selectUserId);
  // A new object each time, equal by its fields: compared shallowly, so it re-renders only on a change.
  const live = useAppSelector(selectLiveReceipts, shallowEqual);
  // The newest jobs come first, so this one is on the first page; polled while it runs.
  const { data } = useGetJobHistoryQuery(
    { userId },
    { pollingInterval: finished ? 0 : 10_000, refetchOnMountOrArgChange: true },
  );
  const item = data?.jobs.find((j) => j.jobId === jobId);
  const server = item?.receipts;
  // Every message of the job carried the same file, its text the caption.
  const attachment = item?.attachment;
  // What every list of this job's report is given.
  const shared = { jobId, attachment: attachment?.fileName };
  const mine = live.jobId === jobId ? live : { delivered: 0, read: 0 };
  const receipts = {
    delivered: Math.max(mine.delivered, server?.delivered ?? 0),
    read: Math.max(mine.read, server?.read ?? 0),
    replied: server?.replied ?? 0,
  };
  const [filter, setFilter] = useState<ReportFilter>('all');
  const filterId = useId();
  const searchId = useId();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<RecipientResult | null>(null);
  useEffect(() => {
    const t = setTimeout(() => setSearch(reportSearchDigits(typed) ?? ''), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [typed]);
  const skipped = progress.skipped ?? 0;
  const show = (r: RecipientResult) => setSelected(r);
  // A search looks through the chosen list (every recipient when "All recipients").
  const searched =
    filter === 'replied'
      ? REPLIED
      : filter === 'skipped'
        ? SKIPPED
        : filter === 'failed'
          ? FAILED
          : RECIPIENT_RESULT_STATUSES;
  return (
    <>
      {attachment && (
        <p className="report-attachment" data-testid="report-attachment">
          <span aria-hidden="true">📎</span> Attachment: <strong>{attachment.fileName}</strong>{' '}
          <span className="muted small">
            ({attachment.kind}, {formatFileSize(attachment.size)}) — sent with every message
          </span>
        </p>
      )}
      <ReceiptsRow receipts={receipts} />
      <div className="report-filter">
        <label htmlFor={filterId}>Show</label>
        <select id={filterId} value={filter} onChange={(e) => setFilter(e.target.value as ReportFilter)}>
          <option value="all">All recipients</option>
          <option value="replied">Replies ({receipts.replied})</option>
          <option value="skipped">Skipped ({skipped})</option>
          <option value="failed">Failed ({progress.failed})</option>
        </select>
        <span className="report-search">
          <label htmlFor={searchId}>{RESULTS_MESSAGES.reportSearchLabel}</label>{' '}
          <input
            id={searchId}
            type="search"
            inputMode="tel"
            value={typed}
            placeholder={RESULTS_MESSAGES.reportSearchPlaceholder}
            onChange={(e) => setTyped(e.target.value)}
          />
        </span>
      </div>
      {reportSearchDigits(typed) === undefined && (
        <p className="field-error small" role="alert">
          {RESULTS_MESSAGES.invalidReportSearch}
        </p>
      )}
      <div className="report-with-panel">
        <div className="report-main">
          {search !== '' && (
            <ReportList
              {...shared}
              statuses={searched}
              search={search}
              label={RESULTS_MESSAGES.reportSearchResults}
              tone="success"
              onShowReplies={show}
            />
          )}
          <div style={search === '' ? undefined : { display: 'none' }}>
            {filter === 'replied' && (
              <ReportList
                {...shared}
                statuses={REPLIED}
                count={receipts.replied}
                label="Replied"
                tone="success"
                refresh={receipts.replied}
                onShowReplies={show}
              />
            )}
            {filter === 'skipped' && (
              <ReportList {...shared} statuses={SKIPPED} count={skipped} label="Skipped" tone="skipped" />
            )}
            {filter === 'failed' && (
              <ReportList {...shared} statuses={FAILED} count={progress.failed} label="Failed" tone="failed" />
            )}
            <div className="results-grid" style={filter === 'all' ? undefined : { display: 'none' }}>
              <ReportList
                {...shared}
                statuses={SUCCESSFUL_RESULT_STATUSES}
                count={progress.sent}
                label="Successful"
                tone="success"
                refresh={receipts.delivered + receipts.read + receipts.replied}
                onShowReplies={show}
              />
              <ReportList {...shared} statuses={FAILED} count={progress.failed} label="Failed" tone="failed" />
            </div>
          </div>
        </div>
        {selected && <RepliesPanel recipient={selected} onClose={() => setSelected(null)} />}
      </div>
      <div className="button-row">
        <ExportButtons jobId={jobId} />
      </div>
    </>
  );
}
