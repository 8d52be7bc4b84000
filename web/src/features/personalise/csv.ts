import Papa from 'papaparse';

/**
 * CSV as RFC 4180 reads it (papaparse): quoted fields with commas, line breaks and "" inside, CRLF or
 * LF. The delimiter is detected (comma, semicolon or tab: spreadsheets in some locales save with ";"),
 * a UTF-8 BOM is ignored and blank lines are dropped. Line ends are made LF first: files edited by hand
 * mix CRLF and LF, and papaparse takes one kind per file (a line break inside a cell becomes LF).
 */
export function parseCsv(text: string): string[][] {
  const source = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  const result = Papa.parse<string[]>(source, {
    newline: '\n',
    delimitersToGuess: [',', ';', '\t'],
    skipEmptyLines: 'greedy',
  });
  return result.data.filter((row) => row.some((cell) => cell.trim() !== ''));
}

/** Rows as RFC 4180 CSV with CRLF line ends, quoting only where a field needs it. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return Papa.unparse(rows.map((r) => [...r]), { newline: '\r\n' }) + '\r\n';
}
