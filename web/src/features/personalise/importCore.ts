import { FILE_LIMITS, FILE_MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import type { RecipientColumns } from '../sender/slice.js';
import { CsvStreamParser } from './csv.js';
import {
  applyMapping,
  guessMapping,
  toTable,
  type ColumnMapping,
  type InvalidRow,
  type SheetTable,
} from './mapping.js';
import { isXlsx, isZip, looksLikeCsv, zipEntries } from './sniff.js';

/** A file refused with a sentence for the user (never a parser's words). */
export class FileRefused extends Error {}

export interface ReadProgress {
  bytes: number;
  total: number;
  rows: number;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value);
}

async function bytesOf(blob: Blob, start: number, end: number): Promise<Uint8Array> {
  return new Uint8Array(await blob.slice(start, end).arrayBuffer());
}

/**
 * A contact file as rows of text cells, judged by its content (not its name): a CSV is read a chunk at a
 * time (progress after each), an XLSX only after its zip says how large it expands. Anything over the
 * limits, or not a spreadsheet, is refused with one plain sentence.
 */
export async function readContactsFile(
  file: Blob,
  onProgress: (p: ReadProgress) => void = () => undefined,
): Promise<string[][]> {
  if (file.size > FILE_LIMITS.maxBytes) throw new FileRefused(FILE_MESSAGES.tooLarge(file.size));
  const head = await bytesOf(file, 0, FILE_LIMITS.sniffBytes);
  if (isZip(head)) return readXlsx(file, onProgress);
  if (!looksLikeCsv(head)) throw new FileRefused(FILE_MESSAGES.notSpreadsheet);
  return readCsv(file, onProgress);
}

async function readCsv(file: Blob, onProgress: (p: ReadProgress) => void): Promise<string[][]> {
  const rows: string[][] = [];
  // The header row does not count against the limit.
  const parser = new CsvStreamParser((r) => {
    rows.push(r);
    if (rows.length > FILE_LIMITS.maxRows + 1) throw new FileRefused(FILE_MESSAGES.tooManyRows);
  });
  const decoder = new TextDecoder('utf-8');
  for (let at = 0; at < file.size; at += FILE_LIMITS.csvChunkBytes) {
    const end = Math.min(file.size, at + FILE_LIMITS.csvChunkBytes);
    parser.push(decoder.decode(await bytesOf(file, at, end), { stream: end < file.size }));
    onProgress({ bytes: end, total: file.size, rows: rows.length });
  }
  parser.end();
  if (rows.length > FILE_LIMITS.maxRows + 1) throw new FileRefused(FILE_MESSAGES.tooManyRows);
  return rows;
}

async function readXlsx(file: Blob, onProgress: (p: ReadProgress) => void): Promise<string[][]> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const entries = zipEntries(bytes);
  if (!entries || !isXlsx(entries)) throw new FileRefused(FILE_MESSAGES.notSpreadsheet);
  if (entries.expandedBytes > FILE_LIMITS.xlsxMaxExpandedBytes) throw new FileRefused(FILE_MESSAGES.xlsxTooLarge);
  onProgress({ bytes: Math.round(file.size / 2), total: file.size, rows: 0 });
  const { readSheet } = await import('read-excel-file/web-worker');
  let sheet: unknown[][];
  try {
    sheet = (await readSheet(bytes.buffer)) as unknown[][];
  } catch {
    throw new FileRefused(WEB_MESSAGES.fileUnreadable);
  }
  const rows: string[][] = [];
  for (const r of sheet) {
    const cells = r.map(cellText);
    if (cells.some((c) => c.trim() !== '')) rows.push(cells);
    if (rows.length > FILE_LIMITS.maxRows + 1) throw new FileRefused(FILE_MESSAGES.tooManyRows);
  }
  onProgress({ bytes: file.size, total: file.size, rows: rows.length });
  return rows;
}

// ---- the conversation between the page and the reader (a Web Worker, or the page itself in tests) ----

/** How many rows that cannot be used are sent back to be listed (the count is always whole). */
export const INVALID_LISTED = 50;

export interface MappingSummary {
  valid: number;
  invalidCount: number;
  /** The first INVALID_LISTED of them. */
  invalid: InvalidRow[];
}

export interface TableInfo {
  header: string[];
  rowCount: number;
  mapping: ColumnMapping;
  summary: MappingSummary;
}

export type ImportRequest =
  | { id: number; type: 'read'; file: Blob }
  | { id: number; type: 'map'; mapping: ColumnMapping }
  | { id: number; type: 'recipients'; mapping: ColumnMapping }
  | { id: number; type: 'recipientsPart'; from: number };

export type ImportReply =
  | { id: number; type: 'progress'; progress: ReadProgress }
  | { id: number; type: 'table'; table: TableInfo }
  | { id: number; type: 'mapped'; summary: MappingSummary }
  /** How many recipients the mapping gives; the page then asks for them a part at a time. */
  | { id: number; type: 'recipients'; count: number }
  /** RECIPIENTS_PART recipients from `from`: each a short task for the page to take in. */
  | { id: number; type: 'recipientsPart'; columns: RecipientColumns }
  | { id: number; type: 'error'; message: string };

function summarize(table: SheetTable, mapping: ColumnMapping): MappingSummary {
  const { valid, invalid } = applyMapping(table, mapping, true);
  return { valid, invalidCount: invalid.length, invalid: invalid.slice(0, INVALID_LISTED) };
}

/** Rows of recipients per message to the page. */
export const RECIPIENTS_PART = 5_000;

/** Recipients as columns: a few arrays of strings cross to the page far faster than 200,000 objects. */
function toColumns(
  recipients: readonly { phone: string; variables: Record<string, string>; row?: number }[],
  mapping: ColumnMapping,
): RecipientColumns {
  const names = [...new Set(mapping.variables.filter((v) => v.include && v.name !== '').map((v) => v.name))];
  return {
    phones: recipients.map((r) => r.phone),
    rows: recipients.map((r) => r.row ?? 0),
    names,
    values: names.map((name) => recipients.map((r) => r.variables[name] ?? '')),
  };
}

/** The reader's side: keeps the table it read, answers the page's requests about it. */
export function createImportHandler(post: (reply: ImportReply) => void): (request: ImportRequest) => Promise<void> {
  let table: SheetTable | null = null;
  /** The recipients of the last mapping asked for, until the page has taken them all. */
  let mapped: RecipientColumns | null = null;
  return async (request) => {
    try {
      switch (request.type) {
        case 'read': {
          table = null;
          const cells = await readContactsFile(request.file, (progress) =>
            post({ id: request.id, type: 'progress', progress }),
          );
          if (cells.length === 0) throw new FileRefused(WEB_MESSAGES.fileNoRows);
          const read = toTable(cells);
          if (read.rows.length > FILE_LIMITS.maxRows) throw new FileRefused(FILE_MESSAGES.tooManyRows);
          table = read;
          const mapping = guessMapping(read);
          post({
            id: request.id,
            type: 'table',
            table: { header: read.header, rowCount: read.rows.length, mapping, summary: summarize(read, mapping) },
          });
          return;
        }
        case 'map':
          if (!table) throw new FileRefused(WEB_MESSAGES.fileUnreadable);
          post({ id: request.id, type: 'mapped', summary: summarize(table, request.mapping) });
          return;
        case 'recipients': {
          if (!table) throw new FileRefused(WEB_MESSAGES.fileUnreadable);
          mapped = toColumns(applyMapping(table, request.mapping).recipients, request.mapping);
          post({ id: request.id, type: 'recipients', count: mapped.phones.length });
          return;
        }
        case 'recipientsPart': {
          // One 200,000-row message would hold the page for a second or more while it is read there:
          // the page asks for a part, takes it in, lets the page run, then asks for the next.
          if (!mapped) throw new FileRefused(WEB_MESSAGES.fileUnreadable);
          const { from } = request;
          const to = from + RECIPIENTS_PART;
          post({
            id: request.id,
            type: 'recipientsPart',
            columns: {
              phones: mapped.phones.slice(from, to),
              rows: mapped.rows.slice(from, to),
              names: mapped.names,
              values: mapped.values.map((v) => v.slice(from, to)),
            },
          });
          return;
        }
      }
    } catch (e) {
      post({
        id: request.id,
        type: 'error',
        message: e instanceof FileRefused ? e.message : WEB_MESSAGES.fileUnreadable,
      });
    }
  };
}
