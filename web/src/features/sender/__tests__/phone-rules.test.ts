import { describe, expect, it } from 'vitest';
import { LIMITS, MESSAGES, normalizeHkPhone, parseHkPhoneList } from '@bns/contracts';
import { pastedColumn } from '../PhoneSpreadsheetDialog.js';

describe('send-screen number rules (SPEC §5)', () => {
  it('accepts exactly 8 digits, ignoring separators and a 852 / +852 prefix', () => {
    expect(normalizeHkPhone('91234567')).toBe('91234567');
    expect(normalizeHkPhone(' 9123 4567 ')).toBe('91234567');
    expect(normalizeHkPhone('9123-4567')).toBe('91234567');
    expect(normalizeHkPhone('+852 9123 4567')).toBe('91234567');
    expect(normalizeHkPhone('85291234567')).toBe('91234567');
    expect(normalizeHkPhone(91234567)).toBe('91234567');
  });

  it('rejects anything else', () => {
    for (const bad of ['9123456', '912345678', '8529123456', 'abcdefgh', '', '+1 415 555 0100', 1.5])
      expect(normalizeHkPhone(bad)).toBeUndefined();
  });

  it('drops invalid rows, skips blanks and merges duplicates (also with numbers already added)', () => {
    const r = parseHkPhoneList(['91234567', '', 'nope', '9123 4567', '61234567', '123', '55551234'], ['55551234']);
    expect(r.valid).toEqual(['91234567', '61234567']);
    expect(r.invalid).toEqual(['nope', '123']);
    expect(r.duplicates).toBe(2);
  });

  it('finds nothing valid in a sheet of bad rows (the dialog then says so)', () => {
    expect(parseHkPhoneList(['1', 'x', '']).valid).toHaveLength(0);
    expect(MESSAGES.noValidNumbersInSpreadsheet).toBe('No valid phone numbers found in spreadsheet');
  });

  it('reads the first column of a pasted block (Excel tabs, CSV commas, CRLF)', () => {
    expect(pastedColumn('91234567\tAnn\r\n61234567\tBen\r\n')).toEqual(['91234567', '61234567']);
    expect(pastedColumn('91234567,Ann\n 61234567 ')).toEqual(['91234567', '61234567']);
    expect(LIMITS.spreadsheetInitialRows).toBe(10);
  });
});
