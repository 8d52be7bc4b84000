import { SKIP_REASON_TEXT, type SkippedEntry } from '@bns/contracts';

/** The progress view's list of recipients a job did not send to, with why. */
export function SkippedList({ entries }: { entries: readonly SkippedEntry[] | undefined }) {
  if (!entries || entries.length === 0) return null;
  return (
    <div className="skipped-results">
      <h3>Skipped ({entries.length})</h3>
      <ul className="result-list skipped" aria-label="Skipped numbers">
        {entries.map((r) => (
          <li key={r.phoneNumber}>
            <span>{r.phoneNumber}</span>
            <span className="muted small">{SKIP_REASON_TEXT[r.reason] ?? r.reason}</span>
            <time dateTime={r.timestamp}>{new Date(r.timestamp).toLocaleTimeString()}</time>
          </li>
        ))}
      </ul>
    </div>
  );
}
