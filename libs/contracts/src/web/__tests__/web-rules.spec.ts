import { describe, expect, it } from '@jest/globals';
import {
  fillPlaceholders,
  normalizeHkPhone,
  parseHkPhoneList,
  placeholderFiller,
  placeholdersIn,
  variableNameOf,
} from '../index.js';
import { isBlankText } from '../../common/schema.js';

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
  it('fills a message split once exactly as a pattern replace would, whatever the values hold', () => {
    const byPattern = (message: string, values: Record<string, string>) =>
      message.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (whole, name: string) =>
        Object.hasOwn(values, name) ? values[name]! : whole,
      );
    const messages = [
      'Hi {{name}}',
      '{{name}}{{name}} and {{ code }} at the end {{code}}',
      'no placeholders at all',
      '{{ unknown }} stays, {{name}} fills, {{bad-name}} is not one',
      '',
      '{{name}',
    ];
    const values = [{ name: 'Ann', code: '$& $1 $$' }, { name: '' }, {}, { code: '{{name}}' }];
    for (const message of messages)
      for (const v of values) expect(placeholderFiller(message)(v)).toBe(byPattern(message, v));
    expect(fillPlaceholders('{{code}}', { code: '$&' })).toBe('$&');
  });
  it('tells blank text from text that shows something, printable ASCII first or not', () => {
    for (const blank of ['', ' ', '\t\n', '\u200b', '\u2800 \ufeff']) expect(isBlankText(blank)).toBe(true);
    for (const shown of ['a', '!', '~x', ' a', '\u200bA', 'é', '中']) expect(isBlankText(shown)).toBe(false);
  });
  it('turns column titles into variable names', () => {
    expect(variableNameOf('First Name')).toBe('first_name');
    expect(variableNameOf(' Discount % ')).toBe('discount');
    expect(variableNameOf('2024 total')).toBe('_2024_total');
  });
});
