import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { FILE_LIMITS, FILE_MESSAGES, variableNameOf, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch } from '../../app/hooks.js';
import type { RecipientColumns } from '../sender/slice.js';
import { importRecipientColumns } from '../sender/thunks.js';
import { toast } from '../toasts/toasts.js';
import { downloadCsvTemplate, downloadXlsxTemplate } from './files.js';
import type { MappingSummary, ReadProgress, TableInfo } from './importCore.js';
import { ContactsFileReader, ReadCancelled } from './importClient.js';
import type { ColumnMapping } from './mapping.js';

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/**
 * Personalise from a file: download a CSV/XLSX template, upload it back (drag and drop or the picker),
 * map its columns to the phone number and {{variables}}, see the rows that cannot be used and why. The
 * file is read in a Web Worker (a CSV a chunk at a time) with a progress bar and Cancel, so the page
 * stays responsive whatever its size; the limits are stated by the drop zone.
 */
export function FileImport({
  title = 'Personalise from a file',
  noun = 'recipient',
  onRecipients,
}: {
  title?: string;
  /** What a mapped row becomes ("recipient", "contact"). */
  noun?: string;
  /** Where the mapped rows go instead of the sender; answers the sentence to show. */
  onRecipients?: (columns: RecipientColumns, fileName: string) => Promise<string>;
} = {}) {
  const dispatch = useAppDispatch();
  const inputId = useId();
  const limitsId = useId();
  const reader = useRef<ContactsFileReader | null>(null);
  const [fileName, setFileName] = useState<string | null>(null);
  const [progress, setProgress] = useState<ReadProgress | null>(null);
  const [table, setTable] = useState<TableInfo | null>(null);
  const [mapping, setMapping] = useState<ColumnMapping | null>(null);
  const [result, setResult] = useState<MappingSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [using, setUsing] = useState(false);

  const close = () => {
    reader.current?.close();
    reader.current = null;
  };
  // The worker goes with the component.
  useEffect(() => close, []);

  const reset = () => {
    close();
    setTable(null);
    setMapping(null);
    setResult(null);
    setProgress(null);
    setFileName(null);
    setUsing(false);
  };

  const load = async (file: File | undefined) => {
    if (!file) return;
    reset();
    setError(null);
    setFileName(file.name);
    // Refused at once, before a byte is read.
    if (file.size > FILE_LIMITS.maxBytes) {
      setError(FILE_MESSAGES.tooLarge(file.size));
      return;
    }
    const r = new ContactsFileReader();
    reader.current = r;
    setProgress({ bytes: 0, total: file.size, rows: 0 });
    try {
      const t = await r.read(file, (p) => {
        if (reader.current === r) setProgress(p);
      });
      if (reader.current !== r) return;
      setTable(t);
      setMapping(t.mapping);
      setResult(t.summary);
    } catch (e) {
      if (e instanceof ReadCancelled || reader.current !== r) return;
      close();
      setError(e instanceof Error ? e.message : WEB_MESSAGES.fileUnreadable);
      setFileName(null);
    } finally {
      if (reader.current === r || reader.current === null) setProgress(null);
    }
  };

  // A changed mapping is checked by the worker, which holds the rows.
  const changeMapping = (next: ColumnMapping) => {
    setMapping(next);
    const r = reader.current;
    if (!r) return;
    void r.map(next).then(
      (summary) => {
        if (reader.current === r) setResult(summary);
      },
      () => undefined,
    );
  };

  const cancel = () => {
    reset();
    setError(null);
    toast.info(FILE_MESSAGES.cancelled);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    void load(e.dataTransfer.files[0]);
  };

  const setPhoneColumn = (column: number) => {
    if (!table) return;
    changeMapping({
      phoneColumn: column,
      variables: table.header
        .map((h, c) => ({ column: c, name: variableNameOf(h), include: true }))
        .filter((v) => v.column !== column),
    });
  };

  const use = async () => {
    const r = reader.current;
    if (!r || !mapping || !result || result.valid === 0) return;
    setUsing(true);
    try {
      const columns = await r.recipients(mapping);
      if (reader.current !== r) return;
      if (onRecipients) toast.success(await onRecipients(columns, fileName ?? 'the file'));
      else {
        await dispatch(importRecipientColumns(columns));
        toast.success(`${plural(columns.phones.length, 'recipient')} added from ${fileName ?? 'the file'}`);
      }
      reset();
    } catch (e) {
      if (!(e instanceof ReadCancelled)) toast.error(e instanceof Error ? e.message : WEB_MESSAGES.fileUnreadable);
      setUsing(false);
    }
  };

  const percent = progress && progress.total > 0 ? Math.round((progress.bytes / progress.total) * 100) : 0;

  return (
    <div className="file-import">
      <div className="file-import-head">
        <h3>{title}</h3>
        <div className="button-row">
          <button type="button" className="button secondary small" onClick={downloadCsvTemplate}>
            Download Template (CSV)
          </button>
          <button
            type="button"
            className="button secondary small"
            onClick={() => void downloadXlsxTemplate().catch(() => toast.error(WEB_MESSAGES.fileUnreadable))}
          >
            Download Template (XLSX)
          </button>
        </div>
      </div>
      <p className="muted small">
        Columns: <code>phone</code>, <code>name</code> and any others; use them in the message as{' '}
        <code>{'{{name}}'}</code>.
      </p>
      <label
        htmlFor={inputId}
        className={`dropzone ${dragging ? 'dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <span>
          <strong>Drop a .csv or .xlsx file here</strong> or click to choose one
        </span>
        <span id={limitsId} className="muted small" data-testid="file-limits">
          {FILE_MESSAGES.limitsNote}
        </span>
        {fileName && <span className="muted small">{fileName}</span>}
      </label>
      <input
        id={inputId}
        className="visually-hidden"
        type="file"
        accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        aria-label="Upload contacts file"
        aria-describedby={limitsId}
        disabled={progress !== null}
        onChange={(e) => {
          void load(e.target.files?.[0]);
          e.target.value = '';
        }}
      />
      {progress && (
        <div className="file-progress" data-testid="file-progress">
          <div
            className="progress"
            role="progressbar"
            aria-label={`${FILE_MESSAGES.reading} ${fileName ?? ''}`}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
          >
            <div className="progress-bar" style={{ width: `${percent}%` }} />
          </div>
          <span className="small" aria-live="polite">
            {FILE_MESSAGES.reading} {percent}% · {FILE_MESSAGES.rowsRead(progress.rows)}
          </span>
          <button type="button" className="button secondary small" onClick={cancel}>
            {FILE_MESSAGES.cancel}
          </button>
        </div>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}

      {table && mapping && result && (
        <div className="mapping" aria-label="Column mapping">
          <div className="mapping-grid">
            <label className="field">
              <span>Phone number column</span>
              <select value={mapping.phoneColumn} onChange={(e) => setPhoneColumn(Number(e.target.value))}>
                {mapping.phoneColumn < 0 && <option value={-1}>Choose…</option>}
                {table.header.map((h, i) => (
                  <option key={i} value={i}>
                    {h}
                  </option>
                ))}
              </select>
            </label>
            {mapping.variables.map((v, k) => (
              <div className="field variable-field" key={v.column}>
                <label className="inline-check">
                  <input
                    type="checkbox"
                    checked={v.include}
                    onChange={(e) =>
                      changeMapping({
                        ...mapping,
                        variables: mapping.variables.map((x, j) => (j === k ? { ...x, include: e.target.checked } : x)),
                      })
                    }
                  />
                  <span>Use “{table.header[v.column]}” as</span>
                </label>
                <input
                  aria-label={`Variable name for column ${table.header[v.column]}`}
                  value={v.name}
                  disabled={!v.include}
                  onChange={(e) =>
                    changeMapping({
                      ...mapping,
                      variables: mapping.variables.map((x, j) =>
                        j === k ? { ...x, name: variableNameOf(e.target.value) } : x,
                      ),
                    })
                  }
                />
              </div>
            ))}
          </div>
          {mapping.phoneColumn < 0 && <p className="field-error">{WEB_MESSAGES.fileNoPhoneColumn}</p>}
          <p data-testid="file-summary">
            <strong>{fileName}</strong>:{' '}
            <span data-testid="file-row-count">{FILE_MESSAGES.rowsRead(table.rowCount)}</span>
            {' · '}
            <strong>{result.valid.toLocaleString('en-US')}</strong> valid recipient{result.valid === 1 ? '' : 's'}
            {result.invalidCount > 0 && (
              <>
                , <strong>{result.invalidCount.toLocaleString('en-US')}</strong> row
                {result.invalidCount === 1 ? '' : 's'} skipped
              </>
            )}
          </p>
          {result.invalid.length > 0 && (
            <table className="invalid-rows">
              <caption>Rows that will be skipped</caption>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">Value</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {result.invalid.map((r) => (
                  <tr key={r.row}>
                    <td>{r.row}</td>
                    <td>{r.value || '—'}</td>
                    <td>{r.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {result.invalidCount > result.invalid.length && (
            <p className="muted small">
              and {(result.invalidCount - result.invalid.length).toLocaleString('en-US')} more
            </p>
          )}
          <div className="button-row">
            <button type="button" className="button secondary small" onClick={reset}>
              Discard
            </button>
            <button
              type="button"
              className="button primary small"
              disabled={result.valid === 0 || using}
              onClick={() => void use()}
            >
              Use {plural(result.valid, noun)}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
