import { strToU8, Zip, ZipDeflate } from 'fflate';
import { EXPORT_COLUMNS, type RecipientResult } from '@bns/contracts';

/** Encodes the report a batch at a time; each call returns the bytes ready so far. */
export interface ReportWriter {
  start(): Uint8Array[];
  rows(rows: readonly RecipientResult[]): Uint8Array[];
  end(): Uint8Array[];
}

/** Variable columns are headed `var:<name>` so they can never collide with the fixed columns. */
export function exportHeader(variables: readonly string[]): string[] {
  return [...EXPORT_COLUMNS, ...variables.map((v) => `var:${v}`)];
}

function cells(r: RecipientResult, variables: readonly string[]): string[] {
  return [
    r.phoneNumber,
    r.status,
    r.error ?? '',
    r.sentAt ?? '',
    r.failedAt ?? '',
    r.deliveredAt ?? '',
    r.readAt ?? '',
    r.repliedAt ?? '',
    ...variables.map((v) => r.variables?.[v] ?? ''),
  ];
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

export function csvWriter(variables: readonly string[]): ReportWriter {
  const line = (values: readonly string[]) => values.map(csvCell).join(',') + '\r\n';
  return {
    // The BOM makes Excel read the file as UTF-8 (names in Chinese stay readable).
    start: () => [strToU8('\uFEFF' + line(exportHeader(variables)))],
    rows: (rows) => [strToU8(rows.map((r) => line(cells(r, variables))).join(''))],
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
    `${HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
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
    `${HEAD}<Relationships xmlns="${REL_NS}"><Relationship Id="rId1" Type="${DOC_REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
  ],
];

/**
 * A one-sheet XLSX written as it goes: the static parts first, then the sheet's XML deflated into the
 * zip a batch at a time (inline strings, no shared-string table to hold in memory).
 */
export function xlsxWriter(variables: readonly string[]): ReportWriter {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((err, data) => {
    if (err) failure = err;
    else out.push(data);
  });
  const sheet = new ZipDeflate('xl/worksheets/sheet1.xml', { level: 1 });
  const columns = exportHeader(variables).map((_, i) => columnName(i));
  let rowNumber = 0;
  const row = (values: readonly string[]) => {
    rowNumber += 1;
    let text = `<row r="${rowNumber}">`;
    values.forEach((v, i) => {
      if (v !== '') text += `<c r="${columns[i]}${rowNumber}" t="inlineStr"><is><t>${xml(v)}</t></is></c>`;
    });
    return text + '</row>';
  };
  const take = () => {
    if (failure) throw failure;
    return out.splice(0);
  };
  return {
    start() {
      for (const [name, text] of STATIC_PARTS) {
        const part = new ZipDeflate(name, { level: 6 });
        zip.add(part);
        part.push(strToU8(text), true);
      }
      zip.add(sheet);
      sheet.push(strToU8(`${HEAD}<worksheet xmlns="${NS}"><sheetData>${row(exportHeader(variables))}`));
      return take();
    },
    rows(rows) {
      sheet.push(strToU8(rows.map((r) => row(cells(r, variables))).join('')));
      return take();
    },
    end() {
      sheet.push(strToU8('</sheetData></worksheet>'), true);
      zip.end();
      return take();
    },
  };
}
