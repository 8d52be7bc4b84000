import { useId, useState } from 'react';
import { ACCOUNT_MESSAGES, AUDIT_KINDS, type AuditKind } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { Spinner } from '../../components/Spinner.js';
import { useGetAuditQuery } from './accountApi.js';

/** The account's audit log, newest first, a page at a time, filtered by kind. */
export function AuditLogTable() {
  const id = useId();
  const [kind, setKind] = useState<AuditKind | ''>('');
  // The cursors of the pages before this one, to go back.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = useGetAuditQuery({ ...(kind ? { kind } : {}), ...(cursor ? { cursor } : {}) });
  return (
    <div className="audit-log">
      <div className="field inline">
        <label htmlFor={id}>Show</label>
        <select
          id={id}
          data-testid="audit-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value as AuditKind | '');
            setCursors([]);
          }}
        >
          <option value="">All kinds</option>
          {AUDIT_KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <button type="button" className="button secondary small" onClick={() => void page.refetch()}>
          Refresh
        </button>
      </div>
      {page.isLoading ? (
        <Spinner label="Loading the audit log…" />
      ) : page.error ? (
        <p className="field-error" role="alert">
          {errorMessage(page.error)}
        </p>
      ) : page.data && page.data.entries.length === 0 ? (
        <p className="muted">{ACCOUNT_MESSAGES.auditEmpty}</p>
      ) : (
        <table className="audit-table" aria-label={ACCOUNT_MESSAGES.auditTitle}>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Who</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {page.data?.entries.map((e, i) => (
              <tr key={`${e.at}-${i}`} data-testid="audit-entry">
                <td>
                  <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>
                </td>
                <td>{e.kind}</td>
                <td>{e.actor}</td>
                <td>{e.address ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="button-row">
        <button
          type="button"
          className="button secondary small"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          className="button secondary small"
          disabled={!page.data?.nextCursor}
          onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
        >
          Older
        </button>
      </div>
    </div>
  );
}
