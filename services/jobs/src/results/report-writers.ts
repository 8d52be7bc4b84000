import { strToU8 } from 'fflate';
import {
  EXPORT_ATTACHMENT_COLUMN,
  EXPORT_COLUMNS,
  RESULT_STATUS_WORDS,
  RESULTS_MESSAGES,
  SKIP_REASON_WORDS,
  type ExportFormat,
  type RecipientResult,
  type SkipReason,
} from '@bns/contracts';
import { xlsxSheetWriter, zoned, type SheetCell } from '@bns/service-kit';

/** Encodes the report a batch at a time; each call returns the bytes ready so far. */
export interface ReportWriter {
  start(): Uint8Array[];
  rows(rows: readonly RecipientResult[]): Uint8Array[];
  end(): Uint8Array[];
}

/**
 * Variable columns are headed `var:<name>` so they can never collide with the fixed columns; a job with
 * an attachment has its file name in an "Attachment" column before them.
 */
export function exportHeader(variables: readonly string[], attachment?: string): string[] {
  return [
    ...EXPORT_COLUMNS,
    ...(attachment === undefined ? [] : [EXPORT_ATTACHMENT_COLUMN]),
    ...variables.map((v) => `var:${v}`),
  ];
}

/** Positions of the time columns in EXPORT_COLUMNS (the XLSX writes them as date cells). */
const TIME_COLUMNS = new Set([4, 5, 6, 7, 8]);

const isSkipReason = (v: string | undefined): v is SkipReason => v !== undefined && Object.hasOwn(SKIP_REASON_WORDS, v);

/** The status in words ("Opted out" for a recipient skipped as opted out), its code, and why. */
function statusCells(r: RecipientResult): [string, string, string] {
  if (r.status === 'skipped') {
    const reason = isSkipReason(r.error) ? r.error : undefined;
    return [
      reason ? SKIP_REASON_WORDS[reason] : RESULT_STATUS_WORDS.skipped,
      reason ?? 'skipped',
      RESULTS_MESSAGES.skippedReason(r.error ?? ''),
    ];
  }
  return [RESULT_STATUS_WORDS[r.status], r.status, r.status === 'failed' ? (r.error ?? '') : ''];
}

/** A time as an instant (ms since the epoch) or none. */
type Cell = SheetCell;

function cells(r: RecipientResult, variables: readonly string[], attachment: string | undefined): Cell[] {
  const time = (iso: string | null | undefined): Cell => {
    const ms = iso ? Date.parse(iso) : NaN;
    return Number.isNaN(ms) ? '' : { at: ms };
  };
  return [
    r.phoneNumber,
    ...statusCells(r),
    time(r.sentAt),
    time(r.failedAt),
    time(r.deliveredAt),
    time(r.readAt),
    time(r.repliedAt),
    // What the recipient wrote, one reply a line, oldest first (a CSV cell still gets the formula guard).
    (r.replies ?? []).map((reply) => reply.text).join('\n'),
    ...(attachment === undefined ? [] : [attachment]),
    ...variables.map((v) => r.variables?.[v] ?? ''),
  ];
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** ISO 8601 with the zone's offset: 2026-12-02T21:04:05+08:00. */
export function isoInZone(ms: number, at: ReturnType<typeof zoned>): string {
  const { local, offsetMinutes } = at(ms);
  const d = new Date(local);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const off = Math.abs(offsetMinutes);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${sign}${pad(Math.floor(off / 60))}:${pad(off % 60)}`
  );
}

/**
 * The export's file name: the campaign's date (in the user's zone) and the first words of its message,
 * e.g. `2026-12-02-hi-your-order-is-ready-results.xlsx`.
 */
export function exportFileName(createdAt: Date, message: string, tz: string, format: ExportFormat): string {
  const d = new Date(zoned(tz)(createdAt.getTime()).local);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const words = message
    .normalize('NFKD')
    .replace(/\{\{[^}]*\}\}/g, ' ')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 5)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${date}-${words || 'campaign'}-results.${format}`;
}

/** A cell that is a number and nothing else: a spreadsheet shows it as such, and it runs nothing. */
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * RFC 4180 quoting; a cell a spreadsheet would run as a formula (one that starts with = + - @ tab or
 * CR) is prefixed with `'` (CSV injection), unless it is a plain number: `-1+1+cmd|…` starts with a
 * digit after the minus too, and still runs.
 */
function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function csvWriter(variables: readonly string[], tz = 'UTC', attachment?: string): ReportWriter {
  const at = zoned(tz);
  const text = (c: Cell) => (typeof c === 'string' ? c : isoInZone(c.at, at));
  const line = (values: readonly Cell[]) => values.map((v) => csvCell(text(v))).join(',') + '\r\n';
  return {
    // The BOM makes Excel read the file as UTF-8 (names in Chinese stay readable).
    start: () => [strToU8('\uFEFF' + line(exportHeader(variables, attachment)))],
    rows: (rows) => [strToU8(rows.map((r) => line(cells(r, variables, attachment))).join(''))],
    end: () => [],
  };
}

/** The report as a one-sheet XLSX (service-kit's writer): times as date cells in the user's zone. */
export function xlsxWriter(variables: readonly string[], tz = 'UTC', attachment?: string): ReportWriter {
  const at = zoned(tz);
  const header = exportHeader(variables, attachment);
  const sheet = xlsxSheetWriter({
    header,
    sheetName: 'Results',
    // Time columns wide enough for "2026-12-02 21:04:05" (a narrow one would show ####).
    widths: header.map((_, i) => (TIME_COLUMNS.has(i) ? 20 : i === 0 ? 14 : 16)),
    localMs: (ms) => at(ms).local,
  });
  return {
    start: () => sheet.start(),
    rows: (rows) => sheet.rows(rows.map((r) => cells(r, variables, attachment))),
    end: () => sheet.end(),
  };
}
