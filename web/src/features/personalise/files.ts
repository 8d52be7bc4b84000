import { saveBlob } from '../../api/saveBlob.js';
import { toCsv } from './csv.js';

/** The downloadable template: a phone column, a name and an example variable. */
export const TEMPLATE_ROWS: readonly (readonly string[])[] = [
  ['phone', 'name', 'discount'],
  ['91234567', 'Ann', '10%'],
  ['61234567', 'Ben', '15%'],
];

export function downloadCsvTemplate(): void {
  saveBlob(new Blob([toCsv(TEMPLATE_ROWS)], { type: 'text/csv;charset=utf-8' }), 'contacts-template.csv');
}

export async function downloadXlsxTemplate(): Promise<void> {
  // Loaded on demand: the xlsx writer is not needed until someone asks for the file.
  const { default: writeXlsxFile } = await import('write-excel-file/browser');
  const blob = await writeXlsxFile(TEMPLATE_ROWS.map((r) => r.map((value) => ({ value, type: String })))).toBlob();
  saveBlob(blob, 'contacts-template.xlsx');
}
