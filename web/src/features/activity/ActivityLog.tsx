import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { logCleared, selectActivity } from './slice.js';

const time = (iso: string) => new Date(iso).toLocaleTimeString();

/** The side Activity Log: newest first, at most 100 entries, with a count badge. */
export function ActivityLog() {
  const entries = useAppSelector(selectActivity);
  const dispatch = useAppDispatch();
  return (
    <aside className="card activity-log" aria-labelledby="activity-title">
      <div className="card-title-row">
        <h2 id="activity-title">
          Activity Log{' '}
          <span className="count-badge" aria-label={`${entries.length} entries`}>
            {entries.length}
          </span>
        </h2>
        {entries.length > 0 && (
          <button type="button" className="button link small" onClick={() => dispatch(logCleared())}>
            Clear
          </button>
        )}
      </div>
      {entries.length === 0 ? (
        <p className="muted small">No activity yet.</p>
      ) : (
        <ol
          className="log-list"
          aria-live="polite"
          aria-relevant="additions"
          // A long log scrolls: focusable, so a keyboard user can scroll it too.
          tabIndex={0}
          aria-label="Activity entries"
        >
          {entries.map((e) => (
            <li key={e.id} className={`log-entry log-${e.type}`}>
              <time dateTime={e.timestamp}>{time(e.timestamp)}</time>
              <span>{e.message}</span>
            </li>
          ))}
        </ol>
      )}
    </aside>
  );
}
