import Papa from 'papaparse';

const DELIMITERS = [',', ';', '\t'] as const;
const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * The delimiter of a CSV from its first lines: the candidate (comma, semicolon, tab: spreadsheets in some
 * locales save with ";") that splits the most of them into the same number of columns, outside quotes.
 */
export function guessDelimiter(sample: string): string {
  const lines: string[] = [];
  let line = '';
  let quoted = false;
  for (let i = 0; i < sample.length && lines.length < 20; i++) {
    const c = sample[i]!;
    if (c === '"') quoted = !quoted;
    if (!quoted && (c === '\n' || c === '\r')) {
      if (line.trim() !== '') lines.push(line);
      line = '';
    } else if (!quoted) line += c;
  }
  if (line.trim() !== '' && lines.length < 20) lines.push(line);
  let best: string = ',';
  let bestScore = 0;
  for (const d of DELIMITERS) {
    const counts = lines.map((l) => l.split(d).length - 1);
    const first = counts[0] ?? 0;
    if (first === 0) continue;
    const score = counts.filter((n) => n === first).length * 1000 + first;
    if (score > bestScore) {
      bestScore = score;
      best = d;
    }
  }
  return best;
}

/**
 * CSV as RFC 4180 reads it, fed in pieces of any size (a large file is read a chunk at a time and never
 * held as one string): quoted fields with delimiters, line breaks and "" inside; CRLF, LF or CR line ends,
 * mixed in one file (a line break inside a cell becomes LF); a UTF-8 BOM is ignored; blank lines are
 * dropped. Rows are handed to `onRow` as they complete.
 */
export class CsvStreamParser {
  private delimiter: string | null;
  private field = '';
  private row: string[] = [];
  private quoted = false;
  /** A quote inside a quoted field: the end of the field, or the first half of "". */
  private quotePending = false;
  /** A CR was the last character: an LF right after it belongs to the same line end. */
  private afterCr = false;
  private started = false;
  private pending = '';

  constructor(
    private readonly onRow: (row: string[]) => void,
    delimiter?: string,
  ) {
    this.delimiter = delimiter ?? null;
  }

  push(text: string): void {
    if (!this.started) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text === '') return;
      this.started = true;
    }
    if (this.delimiter === null) {
      // Enough text to see a few lines before the delimiter is chosen.
      this.pending += text;
      if (this.pending.length < 4096) return;
      text = this.pending;
      this.pending = '';
      this.delimiter = guessDelimiter(text);
    }
    this.consume(text);
  }

  end(): void {
    if (this.delimiter === null) {
      this.delimiter = guessDelimiter(this.pending);
      const text = this.pending;
      this.pending = '';
      this.consume(text);
    }
    if (this.quotePending) {
      this.quoted = false;
      this.quotePending = false;
    }
    if (this.field !== '' || this.row.length > 0) this.endRow();
  }

  /** Runs of plain characters are sliced, not copied one by one: a 20 MB file takes a fraction of a second. */
  private consume(text: string): void {
    const d = this.delimiter!.charCodeAt(0);
    const n = text.length;
    let field = this.field;
    let i = 0;
    while (i < n) {
      if (this.afterCr) {
        this.afterCr = false;
        if (text.charCodeAt(i) === LF) {
          i++;
          continue;
        }
      }
      if (this.quoted) {
        if (this.quotePending) {
          this.quotePending = false;
          if (text.charCodeAt(i) === QUOTE) {
            field += '"';
            i++;
            continue;
          }
          // The field's closing quote: what follows is read as outside quotes.
          this.quoted = false;
          continue;
        }
        let j = i;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === QUOTE || c === CR) break;
          j++;
        }
        field += text.slice(i, j);
        if (j === n) break;
        if (text.charCodeAt(j) === QUOTE) this.quotePending = true;
        else {
          // A CR (or CRLF) inside a cell is a line break: LF.
          field += '\n';
          this.afterCr = true;
        }
        i = j + 1;
        continue;
      }
      if (field === '' && text.charCodeAt(i) === QUOTE) {
        this.quoted = true;
        i++;
        continue;
      }
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === d || c === LF || c === CR) break;
        j++;
      }
      field += text.slice(i, j);
      if (j === n) break;
      const c = text.charCodeAt(j);
      if (c === d) {
        this.row.push(field);
      } else {
        if (c === CR) this.afterCr = true;
        this.field = field;
        this.endRow();
      }
      field = '';
      i = j + 1;
    }
    this.field = field;
  }

  private endRow(): void {
    this.row.push(this.field);
    this.field = '';
    const row = this.row;
    this.row = [];
    if (row.some((cell) => cell.trim() !== '')) this.onRow(row);
  }
}

/** A whole CSV text as rows (see CsvStreamParser). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  const parser = new CsvStreamParser((r) => rows.push(r));
  parser.push(text);
  parser.end();
  return rows;
}

/** Rows as RFC 4180 CSV with CRLF line ends, quoting only where a field needs it. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return (
    Papa.unparse(
      rows.map((r) => [...r]),
      { newline: '\r\n' },
    ) + '\r\n'
  );
}
