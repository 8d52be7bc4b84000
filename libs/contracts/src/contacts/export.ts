import type { Contact } from './types.js';

/** Characters a spreadsheet takes as the start of a formula (and tab / carriage return, which hide one). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell of an export: a value a spreadsheet would run as a formula (`=HYPERLINK(…)`, `+1`,
 * `@SUM(…)`) is kept as text by a leading apostrophe; a cell with a comma, quote or line break is quoted.
 */
export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The export's columns, in order (CSV and XLSX). */
export const CONTACT_EXPORT_COLUMNS = [
  'phone',
  'name',
  'tags',
  'fields',
  'source',
  'createdAt',
  'optedOutAt',
  'lastRepliedAt',
] as const;
export const CONTACT_CSV_HEADER = CONTACT_EXPORT_COLUMNS.join(',');

/** A contact's export cells: tags `;`-separated, fields as `key=value` pairs `;`-separated, times as instants. */
export function contactCells(c: Contact): (string | { at: number })[] {
  const time = (iso: string | null) => (iso ? { at: Date.parse(iso) } : '');
  return [
    c.phone,
    c.name ?? '',
    c.tags.join(';'),
    Object.entries(c.fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(';'),
    c.source,
    time(c.createdAt),
    time(c.facts.optedOutAt),
    time(c.facts.lastRepliedAt),
  ];
}

/** A contact as one line of the CSV export (times in ISO 8601, UTC). */
export function contactCsvLine(c: Contact): string {
  return contactCells(c)
    .map((v) => csvCell(typeof v === 'string' ? v : new Date(v.at).toISOString()))
    .join(',');
}

/** The header of the downloadable list of an import's invalid rows. */
export const INVALID_ROWS_CSV_HEADER = 'row,phone,name,tags,fields';

/**
 * An import's invalid rows as CSV, for the user to correct and import again: each row's number in the
 * list imported (1-based, as the import's answer counts them) and what it held, formulas neutralised.
 */
export function invalidRowsCsv(
  rows: readonly { phone?: unknown; name?: unknown; tags?: unknown; fields?: unknown }[],
  invalidRows: readonly number[],
): string {
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  const lines = invalidRows.map((n) => {
    const row = rows[n - 1] ?? {};
    const tags = Array.isArray(row.tags) ? row.tags.map(text).join(';') : '';
    const fields =
      row.fields && typeof row.fields === 'object'
        ? Object.entries(row.fields as Record<string, unknown>)
            .map(([k, v]) => `${k}=${text(v)}`)
            .join(';')
        : '';
    return [String(n), text(row.phone), text(row.name), tags, fields].map(csvCell).join(',');
  });
  return `${[INVALID_ROWS_CSV_HEADER, ...lines].join('\r\n')}\r\n`;
}
