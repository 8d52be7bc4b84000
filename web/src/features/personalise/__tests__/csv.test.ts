import { describe, expect, it } from 'vitest';
import { parseCsv, toCsv } from '../csv.js';

describe('parseCsv (RFC 4180, papaparse)', () => {
  it('keeps commas, quotes and line breaks inside quoted fields', () => {
    expect(
      parseCsv(
        'phone,note\r\n91234567,"Chan, Tai Man"\r\n61234567,"line one\r\nline two"\r\n51234567,"say ""hi"""\r\n',
      ),
    ).toEqual([
      ['phone', 'note'],
      ['91234567', 'Chan, Tai Man'],
      ['61234567', 'line one\nline two'],
      ['51234567', 'say "hi"'],
    ]);
  });

  it('reads files that mix CRLF and LF line ends', () => {
    expect(parseCsv('phone,name\r\n91234567,"say ""hi"""\n61234567,Bo\r\n')).toEqual([
      ['phone', 'name'],
      ['91234567', 'say "hi"'],
      ['61234567', 'Bo'],
    ]);
  });

  it('detects semicolon and tab delimiters, ignores a BOM and blank lines', () => {
    expect(parseCsv('\uFEFFphone;name\n91234567;"Lee; Ann"\n\n')).toEqual([
      ['phone', 'name'],
      ['91234567', 'Lee; Ann'],
    ]);
    expect(parseCsv('phone\tname\n91234567\tAnn\n')).toEqual([
      ['phone', 'name'],
      ['91234567', 'Ann'],
    ]);
  });

  it('reads back what toCsv writes', () => {
    const rows = [
      ['phone', 'name'],
      ['91234567', 'Chan, "Big" Tai\nMan'],
    ];
    expect(toCsv(rows)).toBe('phone,name\r\n91234567,"Chan, ""Big"" Tai\nMan"\r\n');
    expect(parseCsv(toCsv(rows))).toEqual(rows);
  });
});
