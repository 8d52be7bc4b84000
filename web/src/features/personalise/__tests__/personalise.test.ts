import { describe, expect, it } from 'vitest';
import { fillPlaceholders, placeholdersIn, WEB_MESSAGES } from '@bns/contracts';
import { parseCsv, toCsv } from '../csv.js';
import { TEMPLATE_ROWS } from '../files.js';
import { applyMapping, guessMapping, toTable } from '../mapping.js';

describe('CSV', () => {
  it('parses quotes, escaped quotes, CRLF, a BOM and drops blank lines', () => {
    expect(parseCsv('\uFEFFphone,name\r\n91234567,"Chan, Tai Man"\r\n\r\n61234567,"say ""hi"""\n')).toEqual([
      ['phone', 'name'],
      ['91234567', 'Chan, Tai Man'],
      ['61234567', 'say "hi"'],
    ]);
  });

  it('round-trips the downloadable template', () => {
    expect(parseCsv(toCsv(TEMPLATE_ROWS))).toEqual(TEMPLATE_ROWS.map((r) => [...r]));
    expect(TEMPLATE_ROWS[0]).toEqual(['phone', 'name', 'discount']);
  });
});

describe('column mapping', () => {
  const cells = parseCsv(
    'Name,Mobile Number,Discount\nAnn,9123 4567,10%\nBen,123,5%\nCat,,1%\nDan,+85291234567,2%\nEve,61234567,3%\n',
  );

  it('finds the header and the phone column, the rest become variables', () => {
    const table = toTable(cells);
    expect(table.header).toEqual(['Name', 'Mobile Number', 'Discount']);
    const mapping = guessMapping(table);
    expect(mapping.phoneColumn).toBe(1);
    expect(mapping.variables.map((v) => v.name)).toEqual(['name', 'discount']);
  });

  it('gives recipients with variables and invalid rows with their spreadsheet row and reason', () => {
    const table = toTable(cells);
    const { recipients, invalid } = applyMapping(table, guessMapping(table));
    expect(recipients).toEqual([
      { phone: '91234567', variables: { name: 'Ann', discount: '10%' }, row: 2 },
      { phone: '61234567', variables: { name: 'Eve', discount: '3%' }, row: 6 },
    ]);
    expect(invalid).toEqual([
      { row: 3, value: '123', reason: WEB_MESSAGES.rowInvalidPhone },
      { row: 4, value: '', reason: WEB_MESSAGES.rowMissingPhone },
      { row: 5, value: '+85291234567', reason: WEB_MESSAGES.rowDuplicatePhone },
    ]);
  });

  it('leaves blank cells out, so a recipient with a blank name has no name (as the server sees it)', () => {
    const table = toTable([['phone', 'name'], ['91230001', 'Bob'], ['91230002', '   '], ['91230003']]);
    expect(applyMapping(table, guessMapping(table)).recipients).toEqual([
      { phone: '91230001', variables: { name: 'Bob' }, row: 2 },
      { phone: '91230002', variables: {}, row: 3 },
      { phone: '91230003', variables: {}, row: 4 },
    ]);
  });

  it('without a header row, picks the column full of numbers', () => {
    const table = toTable([
      ['Ann', '91234567'],
      ['Ben', '61234567'],
    ]);
    expect(table.firstRowNumber).toBe(1);
    expect(guessMapping(table).phoneColumn).toBe(1);
  });

  it('fills {{placeholders}} per recipient', () => {
    expect(placeholdersIn('Hi {{name}}, {{ discount }} off, {{name}}!')).toEqual(['name', 'discount']);
    expect(fillPlaceholders('Hi {{name}}, {{ discount }} off {{other}}', { name: 'Ann', discount: '10%' })).toBe(
      'Hi Ann, 10% off {{other}}',
    );
  });
});
