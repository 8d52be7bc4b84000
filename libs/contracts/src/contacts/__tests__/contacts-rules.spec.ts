import { describe, expect, it } from '@jest/globals';
import { checkWith } from '../../common/schema.js';
import { applyFallbacks, fallbacksIn } from '../fallbacks.js';
import { csvCell, invalidRowsCsv } from '../export.js';
import { ContactCreateSchema, conversationPhoneOf, SegmentCreateSchema } from '../schemas.js';

describe('{{var|fallback}}', () => {
  it('fills the fallback where a recipient has no value and keeps the values there are', () => {
    const out = applyFallbacks('Hi {{name|customer}}, {{ shop | our shop }} opens', {
      recipients: [
        { phone: '91234567', variables: { name: 'Ann' } },
        { phone: '91234568', variables: { name: ' ' } },
      ],
    });
    expect(out.message).toBe('Hi {{name}}, {{shop}} opens');
    expect(out.recipients).toEqual([
      { phone: '91234567', variables: { name: 'Ann', shop: 'our shop' } },
      { phone: '91234568', variables: { name: 'customer', shop: 'our shop' } },
    ]);
  });

  it('turns bare numbers into recipients; a message without fallbacks is left alone', () => {
    expect(applyFallbacks('Hi {{name|there}}', { phoneNumbers: ['91234567'] })).toEqual({
      message: 'Hi {{name}}',
      recipients: [{ phone: '91234567', variables: { name: 'there' } }],
    });
    expect(applyFallbacks('Hi {{name}}', { phoneNumbers: ['91234567'] })).toEqual({ message: 'Hi {{name}}' });
    expect(fallbacksIn('{{a|x}} {{a|y}}')).toEqual(new Map([['a', 'x']]));
  });
});

describe('contact rules', () => {
  it('normalises the number as the send screen does and refuses what is not one', () => {
    const ok = checkWith(ContactCreateSchema, {
      phone: '+852 9123-4567',
      fields: { first_name: 7 },
      tags: ['a', ' a '],
    });
    expect(ok).toMatchObject({ ok: true, value: { phone: '91234567', fields: { first_name: '7' }, tags: ['a'] } });
    expect(checkWith(ContactCreateSchema, { phone: '1234' }).ok).toBe(false);
    expect(checkWith(ContactCreateSchema, { phone: '91234567', fields: { 'bad key': 'x' } }).ok).toBe(false);
    expect(checkWith(ContactCreateSchema, { phone: '91234567', tags: ['x'.repeat(51)] }).ok).toBe(false);
  });

  it('takes {phone} of a conversation as 8 digits or 852 + 8 digits only', () => {
    expect(conversationPhoneOf('91234567')).toBe('91234567');
    expect(conversationPhoneOf('85291234567')).toBe('91234567');
    expect(conversationPhoneOf('+85291234567')).toBeUndefined();
    expect(conversationPhoneOf('1234')).toBeUndefined();
  });

  it('a segment needs a name and a rule of known conditions', () => {
    expect(checkWith(SegmentCreateSchema, { name: 'VIP', rule: { tags: { anyOf: ['vip'] } } }).ok).toBe(true);
    expect(checkWith(SegmentCreateSchema, { name: ' ', rule: {} }).ok).toBe(false);
    expect(checkWith(SegmentCreateSchema, { name: 'x', rule: { facts: [{ fact: 'notMessagedForDays' }] } }).ok).toBe(
      false,
    );
  });
});

describe('export', () => {
  it('neutralises spreadsheet formulas and quotes what needs it', () => {
    expect(csvCell('=HYPERLINK("http://x","click")')).toBe(`"'=HYPERLINK(""http://x"",""click"")"`);
    expect(csvCell('+85291234567')).toBe("'+85291234567");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('Chan, Tai Man')).toBe('"Chan, Tai Man"');
    expect(csvCell('Ann')).toBe('Ann');
  });

  it("lists an import's invalid rows by their number, with what they held, formulas neutralised", () => {
    const rows = [
      { phone: '91234567', name: 'Ann' },
      { phone: 'call me', name: '=cmd()', tags: ['vip', 'new'], fields: { city: 'Sha Tin, HK' } },
      { phone: '91234568' },
      { phone: 12 },
    ];
    expect(invalidRowsCsv(rows, [2, 4]).split('\r\n')).toEqual([
      'row,phone,name,tags,fields',
      `2,call me,'=cmd(),vip;new,"city=Sha Tin, HK"`,
      '4,12,,,',
      '',
    ]);
    // A number the answer names that the list does not hold is listed empty, not dropped.
    expect(invalidRowsCsv(rows, [9])).toBe('row,phone,name,tags,fields\r\n9,,,,\r\n');
  });
});
