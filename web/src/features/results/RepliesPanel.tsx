import { RESULTS_MESSAGES, type RecipientResult } from '@bns/contracts';

/**
 * What one recipient wrote back, oldest first, beside the report. The text is the recipient's own
 * words: shown as text (never as markup) and kept out of logs.
 */
export function RepliesPanel({ recipient, onClose }: { recipient: RecipientResult; onClose: () => void }) {
  const title = RESULTS_MESSAGES.repliesTitle(recipient.phoneNumber);
  return (
    <aside className="replies-panel card" aria-label={title}>
      <div className="replies-panel-head">
        <h3>{title}</h3>
        <button
          type="button"
          className="button link small"
          onClick={onClose}
          aria-label={RESULTS_MESSAGES.repliesClose}
        >
          ×
        </button>
      </div>
      <ol className="replies-list">
        {(recipient.replies ?? []).map((reply, i) => (
          <li key={i}>
            <time dateTime={reply.at} className="muted small">
              {new Date(reply.at).toLocaleString()}
            </time>
            <p className="reply-text">{reply.text}</p>
          </li>
        ))}
      </ol>
    </aside>
  );
}
