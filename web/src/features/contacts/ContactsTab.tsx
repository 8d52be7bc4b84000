import { useState, type FormEvent } from 'react';
import {
  CONTACTS_LIMITS,
  invalidRowsCsv,
  type Contact,
  type Segment,
  type SegmentFact,
  type SegmentFieldOp,
  type SegmentRule,
} from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { saveBlob } from '../../api/saveBlob.js';
import { getToken } from '../../api/token.js';
import { userTimeZone } from '../results/download.js';
import { useDebouncedValue } from '../templates/useDebouncedValue.js';
import { toast } from '../toasts/toasts.js';
import { FileImport } from '../personalise/FileImport.js';
import type { RecipientColumns } from '../sender/slice.js';
import {
  rowsFromColumns,
  rowsFromText,
  type ContactImportRow,
  useBulkContactsMutation,
  useCreateSegmentMutation,
  useDeleteContactMutation,
  useGetContactSettingsQuery,
  useGetContactsQuery,
  useGetHistoryQuery,
  useGetSegmentsQuery,
  useImportContactsMutation,
  useSetContactSettingsMutation,
  usePreviewSegmentQuery,
  useSegmentCountQuery,
} from './contactsApi.js';

const PAGE = 50;
const splitTags = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

const FACT_CHOICES: { value: string; label: string }[] = [
  { value: '', label: 'Any history' },
  { value: 'replied', label: 'Replied' },
  { value: 'read', label: 'Read a message' },
  { value: 'delivered', label: 'Was delivered a message' },
  { value: 'failed', label: 'A message failed' },
  { value: 'optedOut', label: 'Opted out' },
  { value: 'notOnWhatsApp', label: 'Not on WhatsApp' },
  { value: 'notMessagedForDays', label: 'Not messaged for N days' },
];

/** The rule the editor's inputs describe (empty parts left out). */
export function ruleOf(form: {
  anyOf: string;
  allOf: string;
  noneOf: string;
  fieldKey: string;
  fieldOp: SegmentFieldOp;
  fieldValue: string;
  fact: string;
  factValue: boolean;
  days: number;
}): SegmentRule {
  const tags = {
    ...(splitTags(form.anyOf).length ? { anyOf: splitTags(form.anyOf) } : {}),
    ...(splitTags(form.allOf).length ? { allOf: splitTags(form.allOf) } : {}),
    ...(splitTags(form.noneOf).length ? { noneOf: splitTags(form.noneOf) } : {}),
  };
  const key = form.fieldKey.trim();
  const fact = form.fact as SegmentFact | '';
  return {
    ...(Object.keys(tags).length ? { tags } : {}),
    ...(key
      ? { fields: [{ key, op: form.fieldOp, ...(form.fieldOp === 'isEmpty' ? {} : { value: form.fieldValue }) }] }
      : {}),
    ...(fact
      ? {
          facts: [
            fact === 'notMessagedForDays'
              ? { fact, days: Math.max(1, Math.round(form.days) || 1) }
              : { fact, ...(form.factValue ? {} : { value: false }) },
          ],
        }
      : {}),
  };
}

function SegmentRow({ segment }: { segment: Segment }) {
  const { data } = useSegmentCountQuery(segment.id);
  return (
    <li>
      <strong>{segment.name}</strong> — {data ? `${data.count.toLocaleString('en-US')} contacts` : '…'}
    </li>
  );
}

/** Segments: tags (any of / all of / none of), a field condition and a fact, a live count, saved by name. */
function SegmentEditor() {
  const { data: segments = [] } = useGetSegmentsQuery();
  const [create, { isLoading }] = useCreateSegmentMutation();
  const [name, setName] = useState('');
  const [form, setForm] = useState({
    anyOf: '',
    allOf: '',
    noneOf: '',
    fieldKey: '',
    fieldOp: 'equals' as SegmentFieldOp,
    fieldValue: '',
    fact: '',
    factValue: true,
    days: 30,
  });
  const set = (patch: Partial<typeof form>) => setForm((f) => ({ ...f, ...patch }));
  const rule = ruleOf(form);
  const ruleKey = useDebouncedValue(JSON.stringify(rule), 300);
  const { data: live, isFetching } = usePreviewSegmentQuery(ruleKey);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await create({ name, rule }).unwrap();
      toast.success(`Segment "${name}" saved`);
      setName('');
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  return (
    <section className="card" aria-label="Segments">
      <h3>Segments</h3>
      <form onSubmit={(e) => void submit(e)}>
        <div className="segment-editor">
          <input
            aria-label="Any of tags"
            placeholder="Any of tags (comma-separated)"
            value={form.anyOf}
            onChange={(e) => set({ anyOf: e.target.value })}
          />
          <input
            aria-label="All of tags"
            placeholder="All of tags"
            value={form.allOf}
            onChange={(e) => set({ allOf: e.target.value })}
          />
          <input
            aria-label="None of tags"
            placeholder="None of tags"
            value={form.noneOf}
            onChange={(e) => set({ noneOf: e.target.value })}
          />
        </div>
        <div className="segment-editor">
          <input
            aria-label="Field"
            placeholder="Field (e.g. city)"
            value={form.fieldKey}
            onChange={(e) => set({ fieldKey: e.target.value })}
          />
          <select
            aria-label="Field condition"
            value={form.fieldOp}
            onChange={(e) => set({ fieldOp: e.target.value as SegmentFieldOp })}
          >
            <option value="equals">equals</option>
            <option value="contains">contains</option>
            <option value="isEmpty">is empty</option>
          </select>
          {form.fieldOp !== 'isEmpty' && (
            <input
              aria-label="Field value"
              placeholder="Value"
              value={form.fieldValue}
              onChange={(e) => set({ fieldValue: e.target.value })}
            />
          )}
        </div>
        <div className="segment-editor">
          <select aria-label="History" value={form.fact} onChange={(e) => set({ fact: e.target.value })}>
            {FACT_CHOICES.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
          {form.fact === 'notMessagedForDays' ? (
            <input
              aria-label="Days"
              type="number"
              min={1}
              max={3650}
              value={form.days}
              onChange={(e) => set({ days: Number(e.target.value) })}
            />
          ) : (
            form.fact && (
              <label className="inline-check">
                <input
                  type="checkbox"
                  checked={!form.factValue}
                  onChange={(e) => set({ factValue: !e.target.checked })}
                />{' '}
                not
              </label>
            )
          )}
        </div>
        <div className="segment-editor">
          <span aria-live="polite" data-testid="segment-live-count">
            {typeof live?.count === 'number'
              ? `${live.count.toLocaleString('en-US')} contacts match`
              : isFetching
                ? 'Counting…'
                : ''}
          </span>
          <input aria-label="Segment name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit" className="button primary small" disabled={isLoading || name.trim() === ''}>
            Save segment
          </button>
        </div>
      </form>
      <ul>
        {segments.map((s) => (
          <SegmentRow key={s.id} segment={s} />
        ))}
      </ul>
    </section>
  );
}

/** Import: a CSV or XLSX file through the column mapping, or "phone,name,tags" lines pasted in; merged by number, all or nothing. */
function ImportBox() {
  const [text, setText] = useState('');
  const [tags, setTags] = useState('');
  const [importRows, { isLoading }] = useImportContactsMutation();
  // The last import's invalid rows, kept until the next import, for the user to correct and import again.
  const [invalid, setInvalid] = useState<{ csv: string; count: number; from: string } | null>(null);
  const run = async (rows: ContactImportRow[], from: string) => {
    const r = await importRows({ rows, tags: splitTags(tags) }).unwrap();
    setInvalid(r.invalid > 0 ? { csv: invalidRowsCsv(rows, r.invalidRows), count: r.invalid, from } : null);
    return `${r.created} created, ${r.updated} updated, ${r.invalid} invalid, ${r.duplicates} duplicates`;
  };
  const fromFile = async (columns: RecipientColumns, fileName: string) =>
    `${fileName}: ${await run(rowsFromColumns(columns), fileName)}`;
  const submit = async () => {
    try {
      toast.success(await run(rowsFromText(text), 'pasted lines'));
      setText('');
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  return (
    <section className="card" aria-label="Import contacts">
      <h3>Import</h3>
      {invalid && (
        <p className="notice" role="status">
          {invalid.count === 1 ? '1 row' : `${invalid.count} rows`} of {invalid.from} had no valid phone number and
          {invalid.count === 1 ? ' was' : ' were'} not imported.{' '}
          <button
            type="button"
            className="button link small"
            onClick={() =>
              saveBlob(new Blob([invalid.csv], { type: 'text/csv;charset=utf-8' }), 'contacts-invalid-rows.csv')
            }
          >
            Download the invalid rows
          </button>
        </p>
      )}
      <FileImport title="Import a CSV or XLSX file" noun="contact" onRecipients={fromFile} />
      <p className="muted small">Or paste lines:</p>
      <textarea
        aria-label="Contacts to import"
        rows={4}
        placeholder={'phone,name,tags\n91234567,Ann,vip;new'}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <input
        aria-label="Tags for every imported contact"
        placeholder="Tags for all (comma-separated)"
        value={tags}
        onChange={(e) => setTags(e.target.value)}
      />
      <button
        type="button"
        className="button secondary small"
        disabled={isLoading || text.trim() === ''}
        onClick={() => void submit()}
      >
        Import
      </button>
    </section>
  );
}

/** The book, or the segment shown, as CSV through the authenticated export call. */
async function downloadContacts(segmentId: string, format: 'csv' | 'xlsx'): Promise<void> {
  const token = await getToken();
  const params = new URLSearchParams({ format, tz: userTimeZone() });
  if (segmentId) params.set('segmentId', segmentId);
  const res = await fetch(`${globalThis.location?.origin ?? ''}/api/contacts/export?${params.toString()}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(`export answered ${res.status}`);
  saveBlob(await res.blob(), `contacts.${format}`);
}

/** Tag, untag or delete the ticked contacts, or every contact of the segment shown. */
function BulkBar({ ids, segmentId, onDone }: { ids: string[]; segmentId: string; onDone: () => void }) {
  const [bulk, { isLoading }] = useBulkContactsMutation();
  const [tags, setTags] = useState('');
  const target = ids.length > 0 ? { ids } : segmentId ? { segmentId } : undefined;
  const what = ids.length > 0 ? `${ids.length} selected` : 'every contact of the segment';
  const run = async (action: 'tag' | 'untag' | 'delete') => {
    if (!target) return;
    if (action === 'delete' && !window.confirm(`Delete ${what}? Their opt-outs stay.`)) return;
    try {
      const r = await bulk({ action, ...(action === 'delete' ? {} : { tags: splitTags(tags) }), ...target }).unwrap();
      toast.success(`${r.affected.toLocaleString('en-US')} contacts ${action === 'delete' ? 'deleted' : 'changed'}`);
      onDone();
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  if (!target) return null;
  const noTags = splitTags(tags).length === 0;
  return (
    <div className="contacts-bulk" role="group" aria-label="Change contacts in bulk">
      <span>Apply to {what}:</span>
      <input
        aria-label="Tags to add or remove"
        placeholder="Tags"
        value={tags}
        onChange={(e) => setTags(e.target.value)}
      />
      <button
        type="button"
        className="button secondary small"
        disabled={isLoading || noTags}
        onClick={() => void run('tag')}
      >
        Add tags
      </button>
      <button
        type="button"
        className="button secondary small"
        disabled={isLoading || noTags}
        onClick={() => void run('untag')}
      >
        Remove tags
      </button>
      <button type="button" className="button secondary small" disabled={isLoading} onClick={() => void run('delete')}>
        Delete
      </button>
    </div>
  );
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/** A contact's side panel: its fields, tags, what is known about the number, and its messages across campaigns. */
function ContactPanel({ contact, onClose }: { contact: Contact; onClose: () => void }) {
  const { data: history = [], isLoading } = useGetHistoryQuery(contact.phone);
  const f = contact.facts;
  return (
    <aside className="card contact-panel" aria-label={`Contact ${contact.phone}`}>
      <div className="inbox-thread-head">
        <h3>
          {contact.name ?? contact.phone} <span className="muted small">{contact.phone}</span>
        </h3>
        <button type="button" className="button link small" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="small">Tags: {contact.tags.length ? contact.tags.join(', ') : '—'}</p>
      <dl className="contact-facts small">
        {Object.entries(contact.fields).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
        <div>
          <dt>Last messaged</dt>
          <dd>{when(f.lastMessagedAt)}</dd>
        </div>
        <div>
          <dt>Last read</dt>
          <dd>{when(f.lastReadAt)}</dd>
        </div>
        <div>
          <dt>Last replied</dt>
          <dd>{when(f.lastRepliedAt)}</dd>
        </div>
        {f.optedOutAt && (
          <div>
            <dt>Opted out</dt>
            <dd>{when(f.optedOutAt)}</dd>
          </div>
        )}
        {f.notOnWhatsAppAt && (
          <div>
            <dt>Not on WhatsApp</dt>
            <dd>{when(f.notOnWhatsAppAt)}</dd>
          </div>
        )}
      </dl>
      <h4>Messages</h4>
      {isLoading && <p className="muted small">Loading…</p>}
      {!isLoading && history.length === 0 && <p className="muted small">No messages with this number yet.</p>}
      <ol className="inbox-messages" aria-label="Message history">
        {history.map((m, i) => (
          <li key={i} className={`inbox-message inbox-${m.direction}`}>
            <span>{m.text}</span>
            <small>
              {new Date(m.at).toLocaleString()}
              {m.status ? ` · ${m.status}` : ''}
            </small>
          </li>
        ))}
      </ol>
    </aside>
  );
}

/** "Save recipients as contacts" (on by default): numbers sent to from a list or a file join the book. */
function SaveRecipientsSetting() {
  const { data } = useGetContactSettingsQuery();
  const [save, { isLoading }] = useSetContactSettingsMutation();
  if (!data) return null;
  return (
    <label className="inline-check small">
      <input
        type="checkbox"
        checked={data.saveRecipients}
        disabled={isLoading}
        onChange={(e) =>
          void save({ saveRecipients: e.target.checked })
            .unwrap()
            .catch((err: unknown) => toast.error(errorMessage(err)))
        }
      />{' '}
      Save recipients as contacts
    </label>
  );
}

/** Contacts: the book with search, a tag and segment filter, paging, bulk changes, export, import and segments. */
export function ContactsTab() {
  const [q, setQ] = useState('');
  const [tag, setTag] = useState('');
  const [segmentId, setSegmentId] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState<string[]>([]);
  const [open, setOpen] = useState<Contact | null>(null);
  const search = useDebouncedValue(q, 300);
  const { data, isFetching, error } = useGetContactsQuery({ q: search, tag, segmentId, cursor, limit: PAGE });
  const { data: segments = [] } = useGetSegmentsQuery();
  const [remove] = useDeleteContactMutation();
  const toggle = (id: string) => setSelected((s) => (s.includes(id) ? s.filter((x) => x !== id) : [...s, id]));
  return (
    <div className="contacts-tab">
      <section className="card" aria-label="Contacts">
        <h3>
          Contacts{' '}
          {data
            ? `(${data.total.toLocaleString('en-US')} of at most ${CONTACTS_LIMITS.contactsPerUserMax.toLocaleString('en-US')})`
            : ''}
        </h3>
        <div className="contacts-filters">
          <input
            aria-label="Search contacts"
            placeholder="Search number, name, tag or field"
            value={q}
            onChange={(e) => (setQ(e.target.value), setCursor(null))}
          />
          <input
            aria-label="Tag filter"
            placeholder="Tag"
            value={tag}
            onChange={(e) => (setTag(e.target.value.trim()), setCursor(null))}
          />
          <select
            aria-label="Segment filter"
            value={segmentId}
            onChange={(e) => (setSegmentId(e.target.value), setCursor(null), setSelected([]))}
          >
            <option value="">All contacts</option>
            {segments.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
          {(['csv', 'xlsx'] as const).map((format) => (
            <button
              key={format}
              type="button"
              className="button secondary small"
              onClick={() => void downloadContacts(segmentId, format).catch((err) => toast.error(errorMessage(err)))}
            >
              Export {format.toUpperCase()}
            </button>
          ))}
        </div>
        <SaveRecipientsSetting />
        <BulkBar ids={selected} segmentId={segmentId} onDone={() => setSelected([])} />
        {error && <p className="notice notice-error">{errorMessage(error)}</p>}
        <table className="contacts-table">
          <thead>
            <tr>
              <th>
                <span className="visually-hidden">Select</span>
              </th>
              <th>Number</th>
              <th>Name</th>
              <th>Tags</th>
              <th>Fields</th>
              <th>Last replied</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(data?.contacts ?? []).map((c) => (
              <tr key={c.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${c.phone}`}
                    checked={selected.includes(c.id)}
                    onChange={() => toggle(c.id)}
                  />
                </td>
                <td>
                  <button type="button" className="button link small" onClick={() => setOpen(c)}>
                    {c.phone}
                  </button>
                </td>
                <td>{c.name ?? ''}</td>
                <td>{c.tags.join(', ')}</td>
                <td>
                  {Object.entries(c.fields)
                    .map(([k, v]) => `${k}: ${v}`)
                    .join('; ')}
                </td>
                <td>
                  {c.facts.optedOutAt
                    ? 'opted out'
                    : c.facts.lastRepliedAt
                      ? new Date(c.facts.lastRepliedAt).toLocaleString()
                      : ''}
                </td>
                <td>
                  <button
                    type="button"
                    className="button link small"
                    onClick={() => void remove(c.id)}
                    aria-label={`Delete ${c.phone}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="contacts-paging">
          <button
            type="button"
            className="button secondary small"
            disabled={cursor === null}
            onClick={() => setCursor(null)}
          >
            First page
          </button>
          <button
            type="button"
            className="button secondary small"
            disabled={!data?.nextCursor || isFetching}
            onClick={() => setCursor(data?.nextCursor ?? null)}
          >
            Next page
          </button>
        </div>
      </section>
      {open && <ContactPanel key={open.id} contact={open} onClose={() => setOpen(null)} />}
      <ImportBox />
      <SegmentEditor />
    </div>
  );
}
