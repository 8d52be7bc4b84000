import { describe, expect, it } from '@jest/globals';
import { strFromU8, unzipSync } from 'fflate';
import type { RecipientResult } from '@bns/contracts';
import { csvWriter, exportFileName, xlsxWriter } from '../report-writers.js';

const row = (variables: Record<string, string>): RecipientResult => ({
  phoneNumber: '91234567',
  variables,
  status: 'sent',
  sentAt: '2025-01-02T03:04:05.000Z',
  deliveredAt: null,
  readAt: null,
  repliedAt: null,
});

/** The CSV cells of one row's variables, as a spreadsheet would read them back (RFC 4180). */
function variableCells(names: readonly string[], variables: Record<string, string>): string[] {
  const text = csvWriter(names)
    .rows([row(variables)])
    .map(strFromU8)
    .join('');
  const cells = [...text.trimEnd().matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) =>
    m[1]!.replace(/^"(.*)"$/s, '$1').replaceAll('""', '"'),
  );
  return cells.slice(-names.length - 1, -1);
}

describe('CSV export: no cell runs as a formula', () => {
  it("escapes a cell starting with a minus and a digit that is not a plain number: -1+1+cmd|' /C calc'!A0", () => {
    expect(variableCells(['x'], { x: "-1+1+cmd|' /C calc'!A0" })).toEqual(["'-1+1+cmd|' /C calc'!A0"]);
  });

  it('escapes every cell starting with = + - @ tab or CR', () => {
    const values = ['=1+1', '+1+1', '-A1', '@SUM(A1)', '\t=1', '\r=1', '-1e3', '-1,5', '+12', '-.5', '--1'];
    const names = values.map((_, i) => `v${i}`);
    const cells = variableCells(names, Object.fromEntries(values.map((v, i) => [`v${i}`, v])));
    expect(cells).toEqual(values.map((v) => `'${v}`));
  });

  it('leaves plain numbers alone: -12.5 stays a number', () => {
    expect(variableCells(['a', 'b', 'c', 'd'], { a: '-12.5', b: '-3', c: '42', d: 'Ann' })).toEqual([
      '-12.5',
      '-3',
      '42',
      'Ann',
    ]);
  });
});

describe('business-ready exports', () => {
  const skipped: RecipientResult = {
    phoneNumber: '61234567',
    variables: { name: 'Ben' },
    status: 'skipped',
    error: 'opted_out',
    sentAt: null,
    failedAt: '2026-12-02T13:04:05.000Z',
    deliveredAt: null,
    readAt: null,
    repliedAt: null,
  };
  const csvLines = (tz: string, rows: RecipientResult[]) => {
    const w = csvWriter(['name'], tz);
    return [...w.start(), ...w.rows(rows), ...w.end()]
      .map((b) => strFromU8(b))
      .join('')
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
  };

  it('CSV: headed in words, status in words with its code beside it, times in ISO 8601 with the offset', () => {
    const lines = csvLines('Asia/Hong_Kong', [row({ name: 'Ann' }), skipped]);
    expect(lines[0]).toBe(
      'Phone number,Status,Status code,Reason,Sent at,Failed at,Delivered at,Read at,Replied at,Replies,var:name',
    );
    expect(lines[1]).toBe('91234567,Sent,sent,,2025-01-02T11:04:05+08:00,,,,,,Ann');
    // A skipped row keeps its variables and says why.
    expect(lines[2]).toBe(
      '61234567,Opted out,opted_out,Not sent: this number opted out,,2026-12-02T21:04:05+08:00,,,,,Ben',
    );
    expect(csvLines('America/New_York', [row({})])[1]).toContain('2025-01-01T22:04:05-05:00');
    expect(csvLines('UTC', [row({})])[1]).toContain('2025-01-02T03:04:05+00:00');
  });

  const replied: RecipientResult = {
    ...row({ name: 'Cat' }),
    status: 'replied',
    repliedAt: '2025-01-02T03:10:00.000Z',
    replies: [
      { text: '=HYPERLINK("http://x")', at: '2025-01-02T03:10:00.000Z' },
      { text: 'Yes, "Friday" works', at: '2025-01-02T03:11:00.000Z' },
    ],
  };

  it("CSV: a recipient's replies in one cell, one a line, and a reply that looks like a formula does not run", () => {
    const w = csvWriter(['name'], 'UTC');
    const text = [...w.start(), ...w.rows([replied]), ...w.end()].map((b) => strFromU8(b)).join('');
    expect(text).toContain(`,2025-01-02T03:10:00+00:00,"'=HYPERLINK(""http://x"")\nYes, ""Friday"" works",Cat\r\n`);
  });

  it('XLSX: the replies are a text cell of their own, never a formula', () => {
    const w = xlsxWriter(['name'], 'UTC');
    const files = unzipSync(concat([...w.start(), ...w.rows([replied]), ...w.end()]));
    const sheet = strFromU8(files['xl/worksheets/sheet1.xml']!);
    expect(sheet).toContain('<c r="J1" t="inlineStr" s="2"><is><t>Replies</t></is></c>');
    expect(sheet).toContain(
      '<c r="J2" t="inlineStr"><is><t>=HYPERLINK(&quot;http://x&quot;)\nYes, &quot;Friday&quot; works</t></is></c>',
    );
    expect(sheet).not.toContain('<f>');
  });

  it('a job with an attachment: its file name in an Attachment column on every row, escaped like any cell', () => {
    const lines = (name: string) =>
      [...csvWriter(['name'], 'UTC', name).start(), ...csvWriter(['name'], 'UTC', name).rows([row({ name: 'Ann' })])]
        .map((b) => strFromU8(b))
        .join('')
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split('\r\n');
    expect(lines('poster.png')).toEqual([
      'Phone number,Status,Status code,Reason,Sent at,Failed at,Delivered at,Read at,Replied at,Replies,Attachment,var:name',
      '91234567,Sent,sent,,2025-01-02T03:04:05+00:00,,,,,,poster.png,Ann',
    ]);
    expect(lines('=HYPERLINK(1).pdf')[1]).toContain(",'=HYPERLINK(1).pdf,Ann");
    const w = xlsxWriter([], 'UTC', 'menu, week 1.pdf');
    const sheet = strFromU8(
      unzipSync(concat([...w.start(), ...w.rows([row({})]), ...w.end()]))['xl/worksheets/sheet1.xml']!,
    );
    expect(sheet).toContain('<t>Attachment</t>');
    expect(sheet).toContain('<t>menu, week 1.pdf</t>');
  });

  it('XLSX: real date cells in the user zone, a bold frozen header row, a styles part', () => {
    const w = xlsxWriter(['name'], 'Asia/Hong_Kong');
    const files = unzipSync(concat([...w.start(), ...w.rows([row({ name: 'Ann' })]), ...w.end()]));
    const sheet = strFromU8(files['xl/worksheets/sheet1.xml']!);
    expect(sheet).toContain('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>');
    expect(sheet).toContain('<c r="A1" t="inlineStr" s="2"><is><t>Phone number</t></is></c>');
    // 2025-01-02 11:04:05 in Hong Kong: serial 45659 + 11:04:05 of a day.
    const serial = Number(/<c r="E2" s="1"><v>([\d.]+)<\/v><\/c>/.exec(sheet)?.[1]);
    expect(serial).toBeCloseTo(45659 + (11 * 3600 + 4 * 60 + 5) / 86400, 6);
    expect(sheet).toContain('<t>Sent</t>');
    expect(strFromU8(files['xl/styles.xml']!)).toContain('formatCode="yyyy-mm-dd hh:mm:ss"');
    expect(strFromU8(files['[Content_Types].xml']!)).toContain('/xl/styles.xml');
  });

  it('names the file by the campaign date in the user zone and the first words of its message', () => {
    const at = new Date('2026-12-02T18:30:00Z');
    expect(exportFileName(at, 'Hi {{name}}, your *order* is ready for pickup today!', 'Asia/Hong_Kong', 'xlsx')).toBe(
      '2026-12-03-hi-your-order-is-ready-results.xlsx',
    );
    expect(exportFileName(at, '你好', 'UTC', 'csv')).toBe('2026-12-02-campaign-results.csv');
  });
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let i = 0;
  for (const p of parts) {
    out.set(p, i);
    i += p.length;
  }
  return out;
}
