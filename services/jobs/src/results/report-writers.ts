import { strToU8, Zip, ZipDeflate } from 'fflate';
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
type Cell = string | { at: number };

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
    ...(attachment === undefined ? [] : [attachment]),
    ...variables.map((v) => r.variables?.[v] ?? ''),
  ];
}

/**
 * Wall-clock parts of an instant in a time zone, and the zone's offset from UTC then (minutes). One
 * formatter per zone: building them is the slow part.
 */
export function zoned(tz: string): (ms: number) => { local: number; offsetMinutes: number } {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (ms) => {
    const p: Record<string, number> = {};
    for (const part of f.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const wholeSeconds = Math.floor(ms / 1000) * 1000;
    const local = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + (ms - wholeSeconds);
    return { local, offsetMinutes: Math.round((local - ms) / 60_000) };
  };
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

const XML_BAD = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/g;
function xml(value: string): string {
  return value
    .replace(XML_BAD, '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

function columnName(index: number): string {
  let n = index + 1;
  let name = '';
  while (n > 0) {
    const m = (n - 1) % 26;
    name = String.fromCharCode(65 + m) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const STATIC_PARTS: Array<[string, string]> = [
  [
    '[Content_Types].xml',
    `${HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
  ],
  [
    '_rels/.rels',
    `${HEAD}<Relationships xmlns="${REL_NS}"><Relationship Id="rId1" Type="${DOC_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  ],
  [
    'xl/workbook.xml',
    `${HEAD}<workbook xmlns="${NS}" xmlns:r="${DOC_REL}"><sheets><sheet name="Results" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `${HEAD}<Relationships xmlns="${REL_NS}"><Relationship Id="rId1" Type="${DOC_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${DOC_REL}/styles" Target="styles.xml"/></Relationships>`,
  ],
  [
    // Style 1: a date and time (a real date cell, sortable and filterable); style 2: the bold header.
    'xl/styles.xml',
    `${HEAD}<styleSheet xmlns="${NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs></styleSheet>`,
  ],
];

/** Days from 1899-12-30 (the spreadsheet epoch) to 1970-01-01. */
const SERIAL_EPOCH_DAYS = 25_569;
/** The frozen header row: it stays in view as the sheet scrolls. */
const SHEET_VIEWS =
  '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>';

/**
 * A one-sheet XLSX written as it goes: the static parts first, then the sheet's XML deflated into the
 * zip a batch at a time (inline strings, no shared-string table to hold in memory).
 */
export function xlsxWriter(variables: readonly string[], tz = 'UTC', attachment?: string): ReportWriter {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((err, data) => {
    if (err) failure = err;
    else out.push(data);
  });
  const sheet = new ZipDeflate('xl/worksheets/sheet1.xml', { level: 1 });
  const at = zoned(tz);
  const columns = exportHeader(variables, attachment).map((_, i) => columnName(i));
  let rowNumber = 0;
  const row = (values: readonly Cell[], header = false) => {
    rowNumber += 1;
    let text = `<row r="${rowNumber}">`;
    values.forEach((v, i) => {
      const ref = `${columns[i]}${rowNumber}`;
      if (typeof v !== 'string') {
        // The wall-clock time in the user's zone as a spreadsheet serial (days), shown as a date and time.
        const serial = at(v.at).local / 86_400_000 + SERIAL_EPOCH_DAYS;
        text += `<c r="${ref}" s="1"><v>${serial.toFixed(8)}</v></c>`;
      } else if (v !== '') {
        text += `<c r="${ref}" t="inlineStr"${header ? ' s="2"' : ''}><is><t>${xml(v)}</t></is></c>`;
      }
    });
    return text + '</row>';
  };
  const take = () => {
    if (failure) throw failure;
    return out.splice(0);
  };
  // Time columns wide enough for "2026-12-02 21:04:05" (a narrow one would show ####).
  const widths = exportHeader(variables, attachment)
    .map(
      (_, i) =>
        `<col min="${i + 1}" max="${i + 1}" width="${TIME_COLUMNS.has(i) ? 20 : i === 0 ? 14 : 16}" customWidth="1"/>`,
    )
    .join('');
  return {
    start() {
      for (const [name, text] of STATIC_PARTS) {
        const part = new ZipDeflate(name, { level: 6 });
        zip.add(part);
        part.push(strToU8(text), true);
      }
      zip.add(sheet);
      sheet.push(
        strToU8(
          `${HEAD}<worksheet xmlns="${NS}">${SHEET_VIEWS}<cols>${widths}</cols><sheetData>${row(exportHeader(variables, attachment), true)}`,
        ),
      );
      return take();
    },
    rows(rows) {
      sheet.push(strToU8(rows.map((r) => row(cells(r, variables, attachment))).join('')));
      return take();
    },
    end() {
      sheet.push(strToU8('</sheetData></worksheet>'), true);
      zip.end();
      return take();
    },
  };
}
