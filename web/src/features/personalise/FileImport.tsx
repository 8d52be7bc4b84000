import { useId, useMemo, useState, type DragEvent } from 'react';
import { variableNameOf, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch } from '../../app/hooks.js';
import { recipientsImported } from '../sender/slice.js';
import { toast } from '../toasts/toasts.js';
import { downloadCsvTemplate, downloadXlsxTemplate, readSpreadsheetFile } from './files.js';
import { applyMapping, guessMapping, toTable, type ColumnMapping, type SheetTable } from './mapping.js';

const INVALID_SHOWN = 50;

/**
 * Personalise from a file: download a CSV/XLSX template, upload it back (drag and drop or the picker),
 * map its columns to the phone number and {{variables}}, see the rows that cannot be used and why.
 */
export function FileImport() {
  const dispatch = useAppDispatch();
  const inputId = useId();
  const [fileName, setFileName] = useState<string | null>(null);
  const [table, setTable] = useState<SheetTable | null>(null);
  const [mapping, setMapping] = useState<ColumnMapping | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);

  const result = useMemo(() => (table && mapping ? applyMapping(table, mapping) : null), [table, mapping]);

  const load = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    setFileName(file.name);
    try {
      const cells = await readSpreadsheetFile(file);
      if (cells.length === 0) throw new Error(WEB_MESSAGES.fileNoRows);
      const t = toTable(cells);
      setTable(t);
      setMapping(guessMapping(t));
    } catch (e) {
      setTable(null);
      setMapping(null);
      setError(e instanceof Error ? e.message : WEB_MESSAGES.fileUnreadable);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    void load(e.dataTransfer.files[0]);
  };

  const setPhoneColumn = (column: number) => {
    if (!table) return;
    setMapping({
      phoneColumn: column,
      variables: table.header.map((h, c) => ({ column: c, name: variableNameOf(h), include: true })).filter((v) => v.column !== column),
    });
  };

  const use = () => {
    if (!result || result.recipients.length === 0) return;
    dispatch(recipientsImported(result.recipients));
    toast.success(`${result.recipients.length} recipients added from ${fileName ?? 'the file'}`);
    setTable(null);
    setMapping(null);
    setFileName(null);
  };

  return (
    <div className="file-import">
      <div className="file-import-head">
        <h3>Personalise from a file</h3>
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
        Columns: <code>phone</code>, <code>name</code> and any others; use them in the message as <code>{'{{name}}'}</code>.
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
        {fileName && <span className="muted small">{fileName}</span>}
      </label>
      <input
        id={inputId}
        className="visually-hidden"
        type="file"
        accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        aria-label="Upload contacts file"
        onChange={(e) => {
          void load(e.target.files?.[0]);
          e.target.value = '';
        }}
      />
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
                      setMapping({ ...mapping, variables: mapping.variables.map((x, j) => (j === k ? { ...x, include: e.target.checked } : x)) })
                    }
                  />
                  <span>Use “{table.header[v.column]}” as</span>
                </label>
                <input
                  aria-label={`Variable name for column ${table.header[v.column]}`}
                  value={v.name}
                  disabled={!v.include}
                  onChange={(e) =>
                    setMapping({
                      ...mapping,
                      variables: mapping.variables.map((x, j) => (j === k ? { ...x, name: variableNameOf(e.target.value) } : x)),
                    })
                  }
                />
              </div>
            ))}
          </div>
          {mapping.phoneColumn < 0 && <p className="field-error">{WEB_MESSAGES.fileNoPhoneColumn}</p>}
          <p>
            <strong>{result.recipients.length}</strong> valid recipient{result.recipients.length === 1 ? '' : 's'}
            {result.invalid.length > 0 && (
              <>
                , <strong>{result.invalid.length}</strong> row{result.invalid.length === 1 ? '' : 's'} skipped
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
                {result.invalid.slice(0, INVALID_SHOWN).map((r) => (
                  <tr key={r.row}>
                    <td>{r.row}</td>
                    <td>{r.value || '—'}</td>
                    <td>{r.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <div className="button-row">
            <button
              type="button"
              className="button secondary small"
              onClick={() => {
                setTable(null);
                setMapping(null);
                setFileName(null);
              }}
            >
              Discard
            </button>
            <button type="button" className="button primary small" disabled={result.recipients.length === 0} onClick={use}>
              Use {result.recipients.length} recipient{result.recipients.length === 1 ? '' : 's'}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
