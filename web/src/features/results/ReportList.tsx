import { useCallback, useEffect, useRef, useState } from 'react';
import {
  RESULT_STATUS_WORDS,
  RESULTS_MESSAGES,
  SKIP_REASON_WORDS,
  type RecipientResult,
  type RecipientResultStatus,
} from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { fetchOnce } from '../../api/fetchOnce.js';
import { useAppDispatch } from '../../app/hooks.js';
import { resultsApi } from './resultsApi.js';
import './results.css';

export const ROW_HEIGHT = 32;
const VIEW_ROWS = 8;
const OVERSCAN = 6;
const PAGE = 200;

interface Page {
  /** The cursor this page was read with (null: the first page). */
  cursor: string | null;
  rows: RecipientResult[];
  next: string | null;
}

const time = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleTimeString() : '');

/** The status in words; a skipped number says why ("Opted out"). */
export function statusWords(r: RecipientResult): string {
  if (r.status === 'skipped' && r.error && Object.hasOwn(SKIP_REASON_WORDS, r.error))
    return SKIP_REASON_WORDS[r.error as keyof typeof SKIP_REASON_WORDS];
  return RESULT_STATUS_WORDS[r.status];
}

const variablesText = (v: Record<string, string> | undefined) =>
  v
    ? Object.entries(v)
        .map(([k, value]) => `${k}: ${value}`)
        .join(', ')
    : '';

/**
 * One list of the report (e.g. the successful or the failed numbers) for a job of any size: pages of
 * the report are read as the user scrolls, and only the rows in view are in the DOM (a virtualised
 * list). `count` is how many the list will hold (the job's counters); when it grows past what was read,
 * the last page is read again, so the list follows a running job.
 */
export function ReportList({
  jobId,
  statuses,
  count: knownCount,
  label,
  tone,
  refresh = 0,
  search,
  onShowReplies,
  attachment,
}: {
  jobId: string;
  statuses: readonly RecipientResultStatus[];
  /** How many the list will hold; absent when unknown (a search): the list then grows as pages are read. */
  count?: number;
  label: string;
  tone: 'success' | 'failed' | 'skipped';
  /** Changes when receipts arrived: the last page is read again, so its statuses move on (delivered, read). */
  refresh?: number;
  /** Digits of a number: only the recipients whose number holds them (the server filters). */
  search?: string;
  /** A row with replies offers to show them (the side panel). */
  onShowReplies?: (row: RecipientResult) => void;
  /** The file name of the job's attachment: every message carried it, so every row says so. */
  attachment?: string;
}) {
  const dispatch = useAppDispatch();
  const [pages, setPages] = useState<Page[]>([]);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const busy = useRef(false);
  /** The row a key press is moving focus to, until the next frame focuses it (presses may come faster). */
  const focusing = useRef<number | null>(null);
  const reloadedFor = useRef(-1);
  const key = `${jobId}|${statuses.join(',')}|${search ?? ''}`;
  const keyRef = useRef(key);

  useEffect(() => {
    keyRef.current = key;
    reloadedFor.current = -1;
    setPages([]);
    setError(null);
    setScrollTop(0);
  }, [key]);

  const rows = pages.flatMap((p) => p.rows);
  const last = pages.at(-1);
  // Unknown size: what was read, and one row more while a page follows (it shows "Loading…").
  const count = knownCount ?? rows.length + (!last || last.next ? 1 : 0);

  const load = useCallback(
    async (replaceLast: boolean) => {
      if (busy.current) return;
      busy.current = true;
      setLoading(true);
      const mine = keyRef.current;
      const cursor = replaceLast ? (last?.cursor ?? null) : (last?.next ?? null);
      try {
        const page = await fetchOnce(
          dispatch(
            resultsApi.endpoints.getJobResults.initiate(
              { jobId, statuses, search, cursor, limit: PAGE },
              { forceRefetch: true },
            ),
          ),
        );
        if (keyRef.current !== mine) return;
        setError(null);
        setPages((ps) => [
          ...(replaceLast ? ps.slice(0, -1) : ps),
          { cursor, rows: page.results, next: page.nextCursor },
        ]);
      } catch (e) {
        setError(`${RESULTS_MESSAGES.reportLoadFailed}: ${errorMessage(e)}`);
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [dispatch, jobId, statuses, search, last],
  );

  const firstVisible = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const lastVisible = Math.min(Math.max(count, rows.length), Math.ceil(scrollTop / ROW_HEIGHT) + VIEW_ROWS + OVERSCAN);

  useEffect(() => {
    if (busy.current || error || count === 0) return;
    if (!last) {
      void load(false);
    } else if (lastVisible > rows.length - OVERSCAN) {
      if (last.next) void load(false);
      // The job moved on since the last page was read: read it again (it may now be full and go on),
      // once per count, so rows the count has but the list does not show cannot make it loop.
      else if (count > rows.length && reloadedFor.current !== count) {
        reloadedFor.current = count;
        void load(true);
      }
    }
  }, [count, rows.length, last, lastVisible, error, load]);

  const loadRef = useRef(load);
  loadRef.current = load;
  const hasPages = pages.length > 0;
  useEffect(() => {
    if (refresh > 0 && hasPages) void loadRef.current(true);
    // Only a new receipt count re-reads here (paging is the effect above), hence `refresh` alone.
  }, [refresh]);

  const total = Math.max(count, rows.length);
  const shown = [];
  for (let i = firstVisible; i < Math.min(lastVisible, total); i++) {
    const r = rows[i];
    shown.push(
      <li
        key={i}
        className="report-row"
        style={{ top: i * ROW_HEIGHT, height: ROW_HEIGHT }}
        data-index={i}
        tabIndex={-1}
        title={r ? variablesText(r.variables) || undefined : undefined}
      >
        {r ? (
          <>
            <span>{r.phoneNumber}</span>
            {tone === 'failed' ? (
              <span className="muted small">{r.error}</span>
            ) : (
              <span className={`status-pill status-${r.status}`}>{statusWords(r)}</span>
            )}
            {attachment !== undefined && (
              <span className="muted small report-attachment-cell" title={`Attachment: ${attachment}`}>
                <span aria-hidden="true">📎</span> {attachment}
              </span>
            )}
            {r.variables && <span className="muted small report-vars">{variablesText(r.variables)}</span>}
            {r.replies && r.replies.length > 0 && onShowReplies && (
              <button
                type="button"
                className="button link small"
                onClick={() => onShowReplies(r)}
                aria-label={`Show replies from ${r.phoneNumber}`}
              >
                {RESULTS_MESSAGES.repliesButton(r.replies.length)}
              </button>
            )}
            <time dateTime={r.sentAt ?? r.failedAt ?? undefined}>{time(r.sentAt ?? r.failedAt)}</time>
          </>
        ) : (
          <span className="muted small">Loading…</span>
        )}
      </li>,
    );
  }

  return (
    <div>
      {/* The rows read are the report itself: a count that lags behind them never shows fewer. */}
      <h3>
        {label} ({knownCount === undefined ? `${rows.length}${last?.next ? '+' : ''}` : total})
      </h3>
      {/* Keyboard: Tab into the list, arrows move between rows (Home / End to the ends); the list scrolls along. */}
      <div
        className={`report-list result-list ${tone}`}
        style={{ height: VIEW_ROWS * ROW_HEIGHT, overflowY: 'auto', position: 'relative' }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        onKeyDown={(e) => {
          const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: VIEW_ROWS, PageUp: -VIEW_ROWS };
          const box = e.currentTarget;
          const at = focusing.current ?? Number((document.activeElement as HTMLElement | null)?.dataset?.index ?? -1);
          const to =
            e.key === 'Home'
              ? 0
              : e.key === 'End'
                ? total - 1
                : e.key in moves
                  ? Math.max(0, at + moves[e.key]!)
                  : null;
          if (to === null || total === 0) return;
          e.preventDefault();
          const index = Math.min(total - 1, to);
          const top = index * ROW_HEIGHT;
          if (top < box.scrollTop) box.scrollTop = top;
          else if (top + ROW_HEIGHT > box.scrollTop + VIEW_ROWS * ROW_HEIGHT)
            box.scrollTop = top + ROW_HEIGHT - VIEW_ROWS * ROW_HEIGHT;
          setScrollTop(box.scrollTop);
          // A row already drawn takes the focus at once; one the scroll brings in, in the next frame.
          const drawn = box.querySelector<HTMLElement>(`[data-index="${index}"]`);
          if (drawn) {
            drawn.focus({ preventScroll: true });
            return;
          }
          focusing.current = index;
          requestAnimationFrame(() => {
            box.querySelector<HTMLElement>(`[data-index="${index}"]`)?.focus();
            if (focusing.current === index) focusing.current = null;
          });
        }}
        tabIndex={0}
        role="region"
        aria-label={`${label} numbers, use the arrow keys to move between rows`}
        data-testid={`report-${tone}`}
      >
        <ul
          aria-label={`${label} numbers`}
          aria-busy={loading}
          style={{ height: total * ROW_HEIGHT, position: 'relative', margin: 0, padding: 0 }}
        >
          {shown}
        </ul>
      </div>
      {error && (
        <p className="field-error small" role="alert">
          {error}{' '}
          <button type="button" className="button link small" onClick={() => setError(null)}>
            Retry
          </button>
        </p>
      )}
    </div>
  );
}
