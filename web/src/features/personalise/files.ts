import { WEB_MESSAGES } from '@bns/contracts';
import { parseCsv, toCsv } from './csv.js';

/** The downloadable template: a phone column, a name and an example variable. */
export const TEMPLATE_ROWS: readonly (readonly string[])[] = [
  ['phone', 'name', 'discount'],
  ['91234567', 'Ann', '10%'],
  ['61234567', 'Ben', '15%'],
];

function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadCsvTemplate(): void {
  saveBlob(new Blob([toCsv(TEMPLATE_ROWS)], { type: 'text/csv;charset=utf-8' }), 'contacts-template.csv');
}

export async function downloadXlsxTemplate(): Promise<void> {
  // Loaded on demand: the xlsx writer is not needed until someone asks for the file.
  const { default: writeXlsxFile } = await import('write-excel-file/browser');
  const blob = await writeXlsxFile(TEMPLATE_ROWS.map((r) => r.map((value) => ({ value, type: String })))).toBlob();
  saveBlob(blob, 'contacts-template.xlsx');
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value);
}

/** A .csv or .xlsx file as rows of text cells. */
export async function readSpreadsheetFile(file: File): Promise<string[][]> {
  const name = file.name.toLowerCase();
  if (name.endsWith('.csv') || name.endsWith('.txt') || file.type === 'text/csv') return parseCsv(await file.text());
  if (name.endsWith('.xlsx')) {
    const { readSheet } = await import('read-excel-file/browser');
    try {
      const rows = await readSheet(file);
      return rows.map((r) => r.map(cellText)).filter((r) => r.some((c) => c.trim() !== ''));
    } catch {
      throw new Error(WEB_MESSAGES.fileUnreadable);
    }
  }
  throw new Error(WEB_MESSAGES.fileUnsupported);
}
