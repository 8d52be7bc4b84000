import { describe, expect, it } from '@jest/globals';
import { fillPlaceholders, normalizeHkPhone, parseHkPhoneList, placeholdersIn, variableNameOf } from '../index.js';

describe('normalizeHkPhone (SPEC §5: exactly 8 digits, 852 stripped)', () => {
  it('accepts 8 digits with separators or a country code', () => {
    for (const v of ['91234567', '9123 4567', '9123-4567', '(9123) 4567', '+852 9123 4567', '85291234567', 91234567])
      expect(normalizeHkPhone(v)).toBe('91234567');
  });
  it('rejects other lengths, letters and non-integers', () => {
    for (const v of ['9123456', '912345678', '852912345', 'phone', '', null, undefined, 9.5, -91234567])
      expect(normalizeHkPhone(v)).toBeUndefined();
  });
});

describe('parseHkPhoneList', () => {
  it('skips blanks, drops invalid rows and merges duplicates, also with numbers already in the list', () => {
    expect(parseHkPhoneList(['91234567', ' ', 'x', '+85291234567', '61234567', null], ['61234567'])).toEqual({
      valid: ['91234567'],
      invalid: ['x'],
      duplicates: 2,
    });
  });
});

describe('placeholders', () => {
  it('lists names once in order and fills them; unknown ones stay as typed', () => {
    expect(placeholdersIn('{{ name }} {{code}} {{name}} {{ bad-name }}')).toEqual(['name', 'code']);
    expect(fillPlaceholders('Hi {{ name }}, {{code}}!', { name: 'Ann' })).toBe('Hi Ann, {{code}}!');
  });
  it('turns column titles into variable names', () => {
    expect(variableNameOf('First Name')).toBe('first_name');
    expect(variableNameOf(' Discount % ')).toBe('discount');
    expect(variableNameOf('2024 total')).toBe('_2024_total');
  });
});
