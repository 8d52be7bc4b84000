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

export const CONTACT_CSV_HEADER = 'phone,name,tags,fields,source,createdAt,optedOutAt,lastRepliedAt';

/** A contact as one line of the export: tags `;`-separated, fields as `key=value` pairs `;`-separated. */
export function contactCsvLine(c: Contact): string {
  return [
    c.phone,
    c.name ?? '',
    c.tags.join(';'),
    Object.entries(c.fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(';'),
    c.source,
    c.createdAt,
    c.facts.optedOutAt ?? '',
    c.facts.lastRepliedAt ?? '',
  ]
    .map(csvCell)
    .join(',');
}
