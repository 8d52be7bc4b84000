import { LIMITS, type Template } from '@bns/contracts';

export interface TemplateCardActions {
  onFavorite: (t: Template) => void;
  onDuplicate: (t: Template) => void;
  onEdit: (t: Template) => void;
  onDelete: (t: Template) => void;
  onUse: (t: Template) => void;
}

export function TemplateCard({
  template: t,
  actions,
  useDisabled,
  useDisabledReason,
}: {
  template: Template;
  actions: TemplateCardActions;
  useDisabled: boolean;
  /** Id of the text saying why Use is disabled. */
  useDisabledReason?: string;
}) {
  const pending = t.id.startsWith('optimistic-');
  const shown = t.phone_numbers.slice(0, LIMITS.templateCardNumbersShown);
  const more = t.phone_numbers.length - shown.length;
  return (
    <article className={`template-card ${pending ? 'pending' : ''}`} aria-label={t.name} aria-busy={pending}>
      <header className="template-card-head">
        <h3>{t.name}</h3>
        <button
          type="button"
          className={`star ${t.is_favorite ? 'on' : ''}`}
          aria-label={t.is_favorite ? `Remove ${t.name} from favorites` : `Add ${t.name} to favorites`}
          aria-pressed={t.is_favorite}
          disabled={pending}
          onClick={() => actions.onFavorite(t)}
        >
          {t.is_favorite ? '★' : '☆'}
        </button>
      </header>
      <div className="template-meta">
        <span className={`category category-${t.category}`}>{t.category}</span>
        <span className="muted small">Used {t.usage_count}×</span>
      </div>
      {t.description && <p className="muted small">{t.description}</p>}
      <p className="template-message">{t.message_content}</p>
      <div className="template-numbers">
        {shown.length === 0 ? (
          <span className="muted small">No phone numbers</span>
        ) : (
          <>
            {shown.map((n) => (
              <span key={n} className="chip small">
                {n}
              </span>
            ))}
            {more > 0 && <span className="muted small">+{more} more</span>}
          </>
        )}
      </div>
      <footer className="template-actions">
        <button
          type="button"
          className="button secondary small"
          disabled={pending}
          onClick={() => actions.onDuplicate(t)}
          aria-label={`Duplicate ${t.name}`}
        >
          Duplicate
        </button>
        <button
          type="button"
          className="button secondary small"
          disabled={pending}
          onClick={() => actions.onEdit(t)}
          aria-label={`Edit ${t.name}`}
        >
          Edit
        </button>
        <button
          type="button"
          className="button danger-outline small"
          disabled={pending}
          onClick={() => actions.onDelete(t)}
          aria-label={`Delete ${t.name}`}
        >
          Delete
        </button>
        <button
          type="button"
          className="button primary small"
          disabled={pending || useDisabled}
          onClick={() => actions.onUse(t)}
          aria-label={`Use ${t.name}`}
          aria-describedby={useDisabled ? useDisabledReason : undefined}
        >
          Use
        </button>
      </footer>
    </article>
  );
}
