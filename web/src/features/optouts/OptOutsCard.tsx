import { useId, useState, type FormEvent } from 'react';
import {
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  optOutSchemas,
  firstIssue,
  type OptOutEntry,
  type OptOutReason,
} from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { saveBlob } from '../../api/saveBlob.js';
import { getToken } from '../../api/token.js';
import { useAppSelector } from '../../app/hooks.js';
import { Spinner } from '../../components/Spinner.js';
import { selectUserId } from '../auth/slice.js';
import { useDebouncedValue } from '../templates/useDebouncedValue.js';
import { toast } from '../toasts/toasts.js';
import './opt-outs.css';
import {
  useAddOptOutsMutation,
  useGetOptOutSettingsQuery,
  useGetOptOutsQuery,
  useRemoveOptOutMutation,
  useSetOptOutSettingsMutation,
} from './optOutsApi.js';

export const OPT_OUTS_PAGE = 20;
const SEARCH_DEBOUNCE_MS = 300;
const REASON_LABEL: Record<OptOutReason, string> = { keyword: 'Replied with a keyword', manual: 'Added by hand' };

/** Numbers typed or pasted one per line, or separated by commas or semicolons. */
export function splitNumbers(text: string): string[] {
  return text
    .split(/[\n,;]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The whole list as CSV: fetched with the token (a plain link would carry none), then saved. */
async function downloadCsv(userId: string): Promise<void> {
  const token = await getToken();
  const res = await fetch(
    `${globalThis.location?.origin ?? ''}/api/opt-outs/${encodeURIComponent(userId)}/export?format=csv`,
    {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    },
  );
  if (!res.ok) throw new Error(((await res.json().catch(() => ({}))) as { error?: string }).error ?? 'Download failed');
  saveBlob(await res.blob(), 'opt-outs.csv');
}

/**
 * The Dashboard's Opt-outs card: how many numbers asked not to be messaged, a searchable
 * paged list with Remove, adding numbers by hand, the CSV download, the keywords and the optional
 * confirmation reply.
 */
export function OptOutsCard() {
  const userId = useAppSelector(selectUserId);
  const [search, setSearch] = useState('');
  const q = useDebouncedValue(search.replace(/\D/g, ''), SEARCH_DEBOUNCE_MS);
  // Cursors of the pages before the one shown: Previous pops one.
  const [cursors, setCursors] = useState<(string | null)[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const page = useGetOptOutsQuery({ userId, q, cursor, limit: OPT_OUTS_PAGE });
  const [add, adding] = useAddOptOutsMutation();
  const [remove] = useRemoveOptOutMutation();
  const [numbersText, setNumbersText] = useState('');
  const [addError, setAddError] = useState<string | null>(null);
  const searchId = useId();
  const addId = useId();

  const resetPaging = () => {
    setCursors([]);
    setCursor(null);
  };

  const onAdd = async (e: FormEvent) => {
    e.preventDefault();
    const phoneNumbers = splitNumbers(numbersText);
    if (phoneNumbers.length === 0) {
      setAddError(OPT_OUT_MESSAGES.phoneNumbersRequired);
      return;
    }
    try {
      const r = await add({ userId, phoneNumbers }).unwrap();
      setNumbersText('');
      setAddError(null);
      resetPaging();
      toast.success(
        `${r.added} added to the opt-out list${r.alreadyListed > 0 ? ` (${r.alreadyListed} already on it)` : ''}`,
      );
    } catch (err) {
      setAddError(errorMessage(err));
    }
  };

  const onRemove = async (entry: OptOutEntry) => {
    try {
      await remove({ userId, phone: entry.phoneNumber }).unwrap();
      toast.success(`${entry.phoneNumber} can receive your messages again`);
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };

  const total = page.data?.total ?? 0;
  return (
    <section className="card opt-outs-card" aria-labelledby="opt-outs-title">
      <div className="card-title-row">
        <h2 id="opt-outs-title">Opt-outs</h2>
        <span className="muted" data-testid="opt-outs-count">
          {total} {total === 1 ? 'number' : 'numbers'}
        </span>
        <button
          type="button"
          className="button secondary small"
          onClick={() =>
            void downloadCsv(userId).catch((err: unknown) =>
              toast.error(err instanceof Error ? err.message : String(err)),
            )
          }
        >
          Download CSV
        </button>
      </div>
      <p className="muted small">
        Numbers on this list are skipped by every job. A recipient who replies with one of your keywords is added at
        once.
      </p>

      <label htmlFor={searchId} className="visually-hidden">
        Search opt-outs
      </label>
      <input
        id={searchId}
        type="search"
        inputMode="numeric"
        placeholder="Search numbers"
        value={search}
        maxLength={OPT_OUT_LIMITS.searchMaxLength + 4}
        onChange={(e) => {
          setSearch(e.target.value);
          resetPaging();
        }}
      />
      {page.isLoading ? (
        <Spinner label="Loading opt-outs…" />
      ) : page.error ? (
        <p className="field-error" role="alert">
          {errorMessage(page.error)}
        </p>
      ) : page.data && page.data.optOuts.length === 0 ? (
        <p className="muted">{q ? 'No number matches.' : 'Nobody has opted out.'}</p>
      ) : (
        <ul className="result-list opt-out-list" aria-label="Opted-out numbers">
          {page.data?.optOuts.map((o) => (
            <li key={o.phoneNumber}>
              <span className="phone">{o.phoneNumber}</span>
              <span className="muted small">{REASON_LABEL[o.reason] ?? o.reason}</span>
              <time dateTime={o.at} className="muted small">
                {new Date(o.at).toLocaleString()}
              </time>
              <button
                type="button"
                className="button link small"
                aria-label={`Remove ${o.phoneNumber}`}
                onClick={() => void onRemove(o)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="button-row">
        <button
          type="button"
          className="button secondary small"
          disabled={cursors.length === 0}
          onClick={() => {
            setCursor(cursors.at(-1) ?? null);
            setCursors(cursors.slice(0, -1));
          }}
        >
          Previous
        </button>
        <button
          type="button"
          className="button secondary small"
          disabled={!page.data?.nextCursor}
          onClick={() => {
            setCursors([...cursors, cursor]);
            setCursor(page.data?.nextCursor ?? null);
          }}
        >
          Next
        </button>
      </div>

      <form onSubmit={(e) => void onAdd(e)} className="opt-out-add">
        <label htmlFor={addId}>
          <strong>Add numbers</strong> <span className="muted small">(one per line or comma-separated)</span>
        </label>
        <textarea
          id={addId}
          rows={3}
          value={numbersText}
          onChange={(e) => setNumbersText(e.target.value)}
          placeholder="91234567"
        />
        {addError && (
          <p className="field-error" role="alert">
            {addError}
          </p>
        )}
        <button type="submit" className="button primary small" disabled={adding.isLoading}>
          Add to opt-outs
        </button>
      </form>

      <OptOutSettingsForm userId={userId} />
    </section>
  );
}

/** The keyword list and the confirmation reply; checked with the same rule the server applies. */
function OptOutSettingsForm({ userId }: { userId: string }) {
  const { data } = useGetOptOutSettingsQuery(userId);
  const [save, saving] = useSetOptOutSettingsMutation();
  const [keyword, setKeyword] = useState('');
  const [draftText, setDraftText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const keywordId = useId();
  const toggleId = useId();
  const textId = useId();
  if (!data) return null;

  const submit = async (patch: {
    keywords?: string[];
    confirmationEnabled?: boolean;
    confirmationText?: string;
  }): Promise<boolean> => {
    const checked = optOutSchemas().settings.safeParse({ ...data, ...patch });
    if (!checked.success) {
      setError(firstIssue(checked.error, OPT_OUT_MESSAGES.settingsNotAnObject));
      return false;
    }
    try {
      await save({ userId, settings: patch }).unwrap();
      setError(null);
      return true;
    } catch (err) {
      setError(errorMessage(err));
      return false;
    }
  };

  const text = draftText ?? data.confirmationText;
  return (
    <div className="opt-out-settings">
      <h3>Opt-out keywords</h3>
      <p className="muted small">A reply that is exactly one of these words (any case) adds the sender to the list.</p>
      <ul className="chips" aria-label="Opt-out keywords">
        {data.keywords.map((k) => (
          <li key={k} className="chip">
            {k}
            <button
              type="button"
              aria-label={`Remove keyword ${k}`}
              onClick={() => void submit({ keywords: data.keywords.filter((x) => x !== k) })}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (keyword.trim() === '') return;
          void submit({ keywords: [...data.keywords, keyword.trim()] }).then((ok) => ok && setKeyword(''));
        }}
      >
        <label htmlFor={keywordId} className="visually-hidden">
          New keyword
        </label>
        <input id={keywordId} value={keyword} placeholder="New keyword" onChange={(e) => setKeyword(e.target.value)} />
        <button type="submit" className="button secondary small" disabled={saving.isLoading}>
          Add keyword
        </button>
      </form>

      <div className="toggle-row">
        <div>
          <label htmlFor={toggleId}>
            <strong>Confirmation reply</strong>
          </label>
          <p className="muted small">Reply once to a number that opts out.</p>
        </div>
        <button
          id={toggleId}
          type="button"
          role="switch"
          aria-checked={data.confirmationEnabled}
          className={`switch ${data.confirmationEnabled ? 'on' : ''}`}
          onClick={() => void submit({ confirmationEnabled: !data.confirmationEnabled })}
        >
          <span className="switch-knob" aria-hidden="true" />
          <span className="switch-label">{data.confirmationEnabled ? 'Enabled' : 'Disabled'}</span>
        </button>
      </div>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit({ confirmationText: text }).then((ok) => {
            if (ok) {
              setDraftText(null);
              toast.success('Confirmation reply saved');
            }
          });
        }}
      >
        <label htmlFor={textId} className="visually-hidden">
          Confirmation reply text
        </label>
        <input
          id={textId}
          value={text}
          maxLength={OPT_OUT_LIMITS.confirmationTextMax + 50}
          onChange={(e) => setDraftText(e.target.value)}
        />
        <button type="submit" className="button secondary small" disabled={saving.isLoading || draftText === null}>
          Save reply
        </button>
      </form>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
