import { describe, expect, it } from '@jest/globals';
import { strFromU8 } from 'fflate';
import type { RecipientResult } from '@bns/contracts';
import { csvWriter } from '../report-writers.js';

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
