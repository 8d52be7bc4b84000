import { normalizeHkPhone, variableNameOf, WEB_MESSAGES } from '@bns/contracts';
import type { Recipient } from '../../api/types.js';

export interface ColumnMapping {
  /** Index of the column holding the phone numbers, or -1 when none is chosen. */
  phoneColumn: number;
  /** The other columns that become variables, each under a {{name}}. */
  variables: { column: number; name: string; include: boolean }[];
}

export interface SheetTable {
  header: string[];
  /** Data rows (the header row excluded). */
  rows: string[][];
  /** 1-based spreadsheet row number of rows[0] (2 with a header row). */
  firstRowNumber: number;
}

export interface InvalidRow {
  row: number;
  value: string;
  reason: string;
}

export interface MappingResult {
  recipients: Recipient[];
  invalid: InvalidRow[];
}

const PHONE_TITLE = /phone|mobile|number|tel|whatsapp|contact/i;

/** A first row with no phone number in it is a header row; otherwise columns are named column_1, column_2, … */
export function toTable(cells: readonly (readonly string[])[]): SheetTable {
  // A loop, not Math.max(...rows): spreading 200,000 rows into one call overflows the stack.
  let width = 0;
  for (const r of cells) if (r.length > width) width = r.length;
  const pad = (r: readonly string[]) => {
    const out = new Array<string>(width);
    for (let i = 0; i < width; i++) out[i] = (r[i] ?? '').trim();
    return out;
  };
  const first = cells[0] ? pad(cells[0]) : [];
  const hasHeader = first.length > 0 && !first.some((c) => normalizeHkPhone(c) !== undefined);
  if (hasHeader)
    return { header: first.map((h, i) => h || `column_${i + 1}`), rows: cells.slice(1).map(pad), firstRowNumber: 2 };
  return {
    header: Array.from({ length: width }, (_, i) => `column_${i + 1}`),
    rows: cells.map(pad),
    firstRowNumber: 1,
  };
}

/** Phone column: the one whose title says so, else the one with the most valid numbers. */
export function guessMapping(table: SheetTable): ColumnMapping {
  let phoneColumn = table.header.findIndex((h) => PHONE_TITLE.test(h));
  if (phoneColumn < 0) {
    let best = 0;
    table.header.forEach((_, col) => {
      const valid = table.rows.filter((r) => normalizeHkPhone(r[col]) !== undefined).length;
      if (valid > best) {
        best = valid;
        phoneColumn = col;
      }
    });
  }
  return {
    phoneColumn,
    variables: table.header
      .map((h, column) => ({ column, name: variableNameOf(h), include: true }))
      .filter((v) => v.column !== phoneColumn),
  };
}

/**
 * Rows to recipients: invalid rows are listed with their reason; a repeated number is merged into the
 * first. `countOnly` (the preview of a large file) counts the valid rows instead of building them.
 */
export function applyMapping(table: SheetTable, mapping: ColumnMapping): MappingResult;
export function applyMapping(
  table: SheetTable,
  mapping: ColumnMapping,
  countOnly: true,
): { valid: number; invalid: InvalidRow[] };
export function applyMapping(
  table: SheetTable,
  mapping: ColumnMapping,
  countOnly = false,
): MappingResult | { valid: number; invalid: InvalidRow[] } {
  const recipients: Recipient[] = [];
  const invalid: InvalidRow[] = [];
  const seen = new Set<string>();
  if (mapping.phoneColumn < 0) return countOnly ? { valid: 0, invalid } : { recipients, invalid };
  const vars = mapping.variables.filter((v) => v.include && v.name !== '');
  table.rows.forEach((cells, i) => {
    const row = table.firstRowNumber + i;
    const value = cells[mapping.phoneColumn] ?? '';
    if (value.trim() === '') {
      invalid.push({ row, value, reason: WEB_MESSAGES.rowMissingPhone });
      return;
    }
    const phone = normalizeHkPhone(value);
    if (phone === undefined) {
      invalid.push({ row, value, reason: WEB_MESSAGES.rowInvalidPhone });
      return;
    }
    if (seen.has(phone)) {
      invalid.push({ row, value, reason: WEB_MESSAGES.rowDuplicatePhone });
      return;
    }
    seen.add(phone);
    if (countOnly) return;
    // A blank cell is no value: the review lists the row instead of sending an empty name.
    const values = vars
      .map((v) => [v.name, (cells[v.column] ?? '').trim()] as const)
      .filter(([, value]) => value !== '');
    recipients.push({ phone, variables: Object.fromEntries(values), row });
  });
  return countOnly ? { valid: seen.size, invalid } : { recipients, invalid };
}
