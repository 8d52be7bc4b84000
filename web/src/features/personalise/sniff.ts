import { normalizePhone } from '@bns/contracts';
import { guessDelimiter } from './csv.js';

export type FileKind = 'csv' | 'xlsx' | 'other';

const ZIP_LOCAL = 0x04034b50;
const ZIP_END = 0x06054b50;
const ZIP_CENTRAL = 0x02014b50;

/** The parts an XLSX zip lists: their names and declared (expanded) sizes. */
export interface ZipEntries {
  names: string[];
  expandedBytes: number;
}

/**
 * The central directory of a whole zip file (its end record is within the last 64 KiB + 22 bytes).
 * Undefined when it is not a readable zip. A ZIP64 size (0xFFFFFFFF) counts as too large to expand.
 */
export function zipEntries(bytes: Uint8Array): ZipEntries | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === ZIP_END) {
      end = i;
      break;
    }
  }
  if (end < 0) return undefined;
  const entries = view.getUint16(end + 10, true);
  const size = view.getUint32(end + 12, true);
  const offset = view.getUint32(end + 16, true);
  if (offset + size > bytes.length) return undefined;
  const dir = bytes.subarray(offset, offset + size);
  const d = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
  const names: string[] = [];
  let expandedBytes = 0;
  let p = 0;
  const decoder = new TextDecoder();
  for (let n = 0; n < entries; n++) {
    if (p + 46 > dir.length || d.getUint32(p, true) !== ZIP_CENTRAL) return undefined;
    const expanded = d.getUint32(p + 24, true);
    expandedBytes += expanded === 0xffffffff ? Number.POSITIVE_INFINITY : expanded;
    const nameLength = d.getUint16(p + 28, true);
    const extra = d.getUint16(p + 30, true);
    const comment = d.getUint16(p + 32, true);
    names.push(decoder.decode(dir.subarray(p + 46, p + 46 + nameLength)));
    p += 46 + nameLength + extra + comment;
  }
  return { names, expandedBytes };
}

export function isZip(head: Uint8Array): boolean {
  return head.length >= 4 && new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true) === ZIP_LOCAL;
}

/** An XLSX is a zip holding a workbook part. */
export function isXlsx(entries: ZipEntries): boolean {
  return entries.names.includes('xl/workbook.xml');
}

/**
 * Whether the first bytes of a file read as a table of text: no binary bytes, and either lines that split
 * into the same number of columns (a README's prose does not), or one column holding phone numbers.
 */
export function looksLikeCsv(head: Uint8Array): boolean {
  if (head.length === 0) return false;
  let control = 0;
  for (const b of head) if (b === 0 || b < 0x09 || (b > 0x0d && b < 0x20)) control++;
  if (control > 0) return false;
  const text = new TextDecoder('utf-8').decode(head);
  // Invalid UTF-8 in more than a few places: a binary file, or text in an encoding we cannot read anyway.
  const replaced = text.split('\uFFFD').length - 1;
  if (replaced > Math.max(2, text.length / 1000)) return false;
  // The sample may cut the last line: only whole lines are judged.
  const cut = head.length >= 1024 ? text.slice(0, Math.max(text.lastIndexOf('\n'), 0)) : text;
  const lines = cut
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\n|\r/)
    .filter((l) => l.trim() !== '')
    .slice(0, 50);
  if (lines.length === 0) return false;
  const delimiter = guessDelimiter(lines.join('\n'));
  const columns = lines.map((l) => splitOutsideQuotes(l, delimiter));
  const widths = columns.map((c) => c.length);
  if (Math.max(...widths) === 1) {
    // One column: a list of numbers, maybe under a title.
    return columns.some(
      (c) => normalizePhone(c[0], 'international') !== undefined || normalizePhone(c[0], 'hk') !== undefined,
    );
  }
  const first = widths[0]!;
  const same = widths.filter((w) => w === first).length;
  return first > 1 && same >= Math.ceil(lines.length * 0.8);
}

function splitOutsideQuotes(line: string, delimiter: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (c === delimiter && !quoted) {
      out.push(cell);
      cell = '';
      continue;
    }
    cell += c;
  }
  out.push(cell);
  return out;
}
