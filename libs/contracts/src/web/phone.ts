import { normalizePhone } from '../common/phone.js';

/**
 * A send-screen number (SPEC §5, §9): exactly 8 Hong Kong digits. Separators are ignored and a leading
 * +852 / 852 country code is stripped, since people paste numbers in either form. Undefined when what
 * is left is not 8 digits. (`normalizePhone(value, 'hk')`.)
 */
export function normalizeHkPhone(value: unknown): string | undefined {
  return normalizePhone(value, 'hk');
}

export interface PhoneListResult {
  /** Valid numbers in first-seen order, duplicates merged. */
  valid: string[];
  /** Non-empty entries that are not 8 digits, as typed. */
  invalid: string[];
  /** How many valid entries repeated an earlier one. */
  duplicates: number;
}

/**
 * The spreadsheet dialog's rule: blank rows are ignored, invalid rows are dropped, duplicates (also
 * against `existing`) are merged.
 */
export function parseHkPhoneList(entries: readonly unknown[], existing: readonly string[] = []): PhoneListResult {
  const seen = new Set(existing);
  const valid: string[] = [];
  const invalid: string[] = [];
  let duplicates = 0;
  for (const entry of entries) {
    if (entry === null || entry === undefined || (typeof entry === 'string' && entry.trim() === '')) continue;
    const phone = normalizeHkPhone(entry);
    if (phone === undefined) invalid.push(String(entry).trim());
    else if (seen.has(phone)) duplicates++;
    else {
      seen.add(phone);
      valid.push(phone);
    }
  }
  return { valid, invalid, duplicates };
}
