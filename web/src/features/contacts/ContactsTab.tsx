import { useState, type FormEvent } from 'react';
import { CONTACTS_LIMITS, type Segment } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useDebouncedValue } from '../templates/useDebouncedValue.js';
import { toast } from '../toasts/toasts.js';
import {
  rowsFromText,
  useCreateSegmentMutation,
  useDeleteContactMutation,
  useGetContactsQuery,
  useGetSegmentsQuery,
  useImportContactsMutation,
  useSegmentCountQuery,
} from './contactsApi.js';

const PAGE = 50;
const splitTags = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

function SegmentRow({ segment }: { segment: Segment }) {
  const { data } = useSegmentCountQuery(segment.id);
  return (
    <li>
      <strong>{segment.name}</strong> — {data ? `${data.count.toLocaleString('en-US')} contacts` : '…'}
    </li>
  );
}

/** Segments: a saved rule of tags (any of / none of) and its count. */
function SegmentEditor() {
  const { data: segments = [] } = useGetSegmentsQuery();
  const [create, { isLoading }] = useCreateSegmentMutation();
  const [name, setName] = useState('');
  const [anyOf, setAnyOf] = useState('');
  const [noneOf, setNoneOf] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const rule = {
      tags: {
        ...(splitTags(anyOf).length ? { anyOf: splitTags(anyOf) } : {}),
        ...(splitTags(noneOf).length ? { noneOf: splitTags(noneOf) } : {}),
      },
    };
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
      <form onSubmit={(e) => void submit(e)} className="segment-editor">
        <input aria-label="Segment name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} />
        <input
          aria-label="Any of tags"
          placeholder="Any of tags (comma-separated)"
          value={anyOf}
          onChange={(e) => setAnyOf(e.target.value)}
        />
        <input
          aria-label="None of tags"
          placeholder="None of tags"
          value={noneOf}
          onChange={(e) => setNoneOf(e.target.value)}
        />
        <button type="submit" className="btn" disabled={isLoading || name.trim() === ''}>
          Save segment
        </button>
      </form>
      <ul>
        {segments.map((s) => (
          <SegmentRow key={s.id} segment={s} />
        ))}
      </ul>
    </section>
  );
}

/** Import: "phone,name,tags" lines pasted in, merged by number, all or nothing. */
function ImportBox() {
  const [text, setText] = useState('');
  const [tags, setTags] = useState('');
  const [importRows, { isLoading }] = useImportContactsMutation();
  const submit = async () => {
    try {
      const r = await importRows({ rows: rowsFromText(text), tags: splitTags(tags) }).unwrap();
      toast.success(`${r.created} created, ${r.updated} updated, ${r.invalid} invalid, ${r.duplicates} duplicates`);
      setText('');
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  return (
    <section className="card" aria-label="Import contacts">
      <h3>Import</h3>
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
      <button type="button" className="btn" disabled={isLoading || text.trim() === ''} onClick={() => void submit()}>
        Import
      </button>
    </section>
  );
}

/** Contacts: the book with search, a tag filter, paging, import and segments. */
export function ContactsTab() {
  const [q, setQ] = useState('');
  const [tag, setTag] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const search = useDebouncedValue(q, 300);
  const { data, isFetching, error } = useGetContactsQuery({ q: search, tag, cursor, limit: PAGE });
  const [remove] = useDeleteContactMutation();
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
        </div>
        {error && <p className="notice notice-error">{errorMessage(error)}</p>}
        <table className="contacts-table">
          <thead>
            <tr>
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
                <td>{c.phone}</td>
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
                    className="btn-link"
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
          <button type="button" className="btn" disabled={cursor === null} onClick={() => setCursor(null)}>
            First page
          </button>
          <button
            type="button"
            className="btn"
            disabled={!data?.nextCursor || isFetching}
            onClick={() => setCursor(data?.nextCursor ?? null)}
          >
            Next page
          </button>
        </div>
      </section>
      <ImportBox />
      <SegmentEditor />
    </div>
  );
}
