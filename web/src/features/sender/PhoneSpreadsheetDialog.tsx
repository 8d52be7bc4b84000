import { useEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent } from 'react';
import { LIMITS, MESSAGES, parseHkPhoneList } from '@bns/contracts';
import { Dialog } from '../../components/Dialog.js';

export interface SpreadsheetResult {
  valid: string[];
  invalid: string[];
  duplicates: number;
}

/** Splits pasted text into the first column's cells (rows by line, columns by tab or comma). */
export function pastedColumn(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => line.split(/\t|,/)[0]!.trim());
}

/**
 * The Add Phone Numbers dialog: a one-column spreadsheet that starts with 10 rows, accepts typing
 * (Enter / arrows move between rows) and a pasted column (rows are added as needed).
 */
export function PhoneSpreadsheetDialog({
  existing,
  onAdd,
  onClose,
}: {
  existing: readonly string[];
  onAdd: (result: SpreadsheetResult) => void;
  onClose: () => void;
}) {
  const [rows, setRows] = useState<string[]>(() => Array(LIMITS.spreadsheetInitialRows).fill(''));
  const [error, setError] = useState<string | null>(null);
  const cells = useRef<(HTMLInputElement | null)[]>([]);
  const firstCell = useRef<HTMLInputElement | null>(null);

  // Focus moves after the render that may have added the row.
  const [focusIndex, setFocusIndex] = useState<number | null>(null);
  useEffect(() => {
    if (focusIndex === null) return;
    cells.current[focusIndex]?.focus();
    setFocusIndex(null);
  }, [focusIndex, rows]);
  const focusRow = (i: number) => setFocusIndex(i);

  const setRow = (i: number, value: string) => setRows((r) => r.map((v, j) => (j === i ? value : v)));

  const onPaste = (i: number, e: ClipboardEvent<HTMLInputElement>) => {
    const values = pastedColumn(e.clipboardData.getData('text/plain'));
    if (values.length <= 1) return;
    e.preventDefault();
    // New numbers: an earlier "No valid phone numbers" no longer describes the sheet.
    setError(null);
    setRows((r) => {
      const next = [...r];
      while (next.length < i + values.length) next.push('');
      values.forEach((v, k) => (next[i + k] = v));
      return next;
    });
    focusRow(Math.min(i + values.length, rows.length + values.length) - 1);
  };

  const onKey = (i: number, e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter' || e.key === 'ArrowDown') {
      e.preventDefault();
      if (i === rows.length - 1) setRows((r) => [...r, '']);
      focusRow(i + 1);
    } else if (e.key === 'ArrowUp' && i > 0) {
      e.preventDefault();
      focusRow(i - 1);
    }
  };

  const submit = () => {
    const result = parseHkPhoneList(rows, existing);
    if (result.valid.length === 0 && result.duplicates === 0) {
      setError(MESSAGES.noValidNumbersInSpreadsheet);
      return;
    }
    onAdd(result);
  };

  const filled = rows.filter((r) => r.trim() !== '').length;

  return (
    <Dialog
      title="Add Phone Numbers"
      size="medium"
      onClose={onClose}
      initialFocus={firstCell}
      footer={
        <>
          <span className="muted small">{filled} filled</span>
          <button type="button" className="button secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="button primary" onClick={submit}>
            Add Numbers
          </button>
        </>
      }
    >
      <div className="instructions" aria-label="Instructions">
        <strong>Instructions</strong>
        <ul>
          <li>Enter one Hong Kong phone number per row: 8 digits (a leading 852 is removed).</li>
          <li>Paste a whole column from Excel or Google Sheets into any row.</li>
          <li>Invalid numbers are skipped and duplicates are merged.</li>
          <li>
            Max {LIMITS.instructionsMaxContactsPerBatch} contacts per batch; messages are sent at{' '}
            {LIMITS.instructionsIntervalSeconds}-second intervals.
          </li>
        </ul>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="sheet" role="grid" aria-label="Phone numbers spreadsheet" aria-rowcount={rows.length}>
        <div className="sheet-row sheet-head" role="row">
          <span role="columnheader" className="sheet-index">
            #
          </span>
          <span role="columnheader">Phone Number</span>
        </div>
        {rows.map((value, i) => (
          <div className="sheet-row" role="row" key={i}>
            <span className="sheet-index" role="rowheader">
              {i + 1}
            </span>
            <span role="gridcell">
              <input
                ref={(el) => {
                  cells.current[i] = el;
                  if (i === 0) firstCell.current = el;
                }}
                className="sheet-cell"
                inputMode="tel"
                aria-label={`Phone number row ${i + 1}`}
                value={value}
                onChange={(e) => {
                  setRow(i, e.target.value);
                  setError(null);
                }}
                onPaste={(e) => onPaste(i, e)}
                onKeyDown={(e) => onKey(i, e)}
              />
            </span>
          </div>
        ))}
      </div>
      <button
        type="button"
        className="button link small"
        onClick={() => setRows((r) => [...r, ...Array(LIMITS.spreadsheetInitialRows).fill('')])}
      >
        + Add {LIMITS.spreadsheetInitialRows} rows
      </button>
    </Dialog>
  );
}
