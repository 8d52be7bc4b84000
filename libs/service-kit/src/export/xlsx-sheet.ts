import { strToU8, Zip, ZipDeflate } from 'fflate';

/** A cell: text (blank is no cell) or an instant (ms since the epoch), written as a real date cell. */
export type SheetCell = string | { at: number };

export interface XlsxSheetOptions {
  header: readonly string[];
  /** The sheet's tab name. */
  sheetName?: string;
  /** Column widths in characters, by position (16 where not given). */
  widths?: readonly number[];
  /** The wall-clock time (ms) to show for an instant: the user's time zone (UTC when not given). */
  localMs?: (ms: number) => number;
}

/** Encodes the sheet a batch of rows at a time; each call returns the bytes ready so far. */
export interface XlsxSheetWriter {
  start(): Uint8Array[];
  rows(rows: readonly (readonly SheetCell[])[]): Uint8Array[];
  end(): Uint8Array[];
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
const staticParts = (sheetName: string): Array<[string, string]> => [
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
    `${HEAD}<workbook xmlns="${NS}" xmlns:r="${DOC_REL}"><sheets><sheet name="${xml(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
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

/** Days from 1899-12-30 (the spreadsheet epoch) to 1970-01-01. */
const SERIAL_EPOCH_DAYS = 25_569;
/** The frozen header row: it stays in view as the sheet scrolls. */
const SHEET_VIEWS =
  '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>';

/**
 * A one-sheet XLSX written as it goes: the static parts first, then the sheet's XML deflated into the
 * zip a batch at a time (inline strings, no shared-string table to hold in memory), a bold frozen
 * header row, and instants as date cells in the wall-clock time `localMs` gives.
 */
export function xlsxSheetWriter(options: XlsxSheetOptions): XlsxSheetWriter {
  const { header, sheetName = 'Sheet1', widths = [], localMs = (ms: number) => ms } = options;
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((err, data) => {
    if (err) failure = err;
    else out.push(data);
  });
  const sheet = new ZipDeflate('xl/worksheets/sheet1.xml', { level: 1 });
  const columns = header.map((_, i) => columnName(i));
  let rowNumber = 0;
  const row = (values: readonly SheetCell[], bold = false) => {
    rowNumber += 1;
    let text = `<row r="${rowNumber}">`;
    values.forEach((v, i) => {
      const ref = `${columns[i] ?? columnName(i)}${rowNumber}`;
      if (typeof v !== 'string') {
        const serial = localMs(v.at) / 86_400_000 + SERIAL_EPOCH_DAYS;
        text += `<c r="${ref}" s="1"><v>${serial.toFixed(8)}</v></c>`;
      } else if (v !== '') {
        text += `<c r="${ref}" t="inlineStr"${bold ? ' s="2"' : ''}><is><t>${xml(v)}</t></is></c>`;
      }
    });
    return text + '</row>';
  };
  const take = () => {
    if (failure) throw failure;
    return out.splice(0);
  };
  const cols = header
    .map((_, i) => `<col min="${i + 1}" max="${i + 1}" width="${widths[i] ?? 16}" customWidth="1"/>`)
    .join('');
  return {
    start() {
      for (const [name, text] of staticParts(sheetName)) {
        const part = new ZipDeflate(name, { level: 6 });
        zip.add(part);
        part.push(strToU8(text), true);
      }
      zip.add(sheet);
      sheet.push(
        strToU8(`${HEAD}<worksheet xmlns="${NS}">${SHEET_VIEWS}<cols>${cols}</cols><sheetData>${row(header, true)}`),
      );
      return take();
    },
    rows(rows) {
      sheet.push(strToU8(rows.map((r) => row(r)).join('')));
      return take();
    },
    end() {
      sheet.push(strToU8('</sheetData></worksheet>'), true);
      zip.end();
      return take();
    },
  };
}
