import { LIMITS } from './limits.js';

/** Separators people type or paste inside a number; they carry no digits. */
const SEPARATORS = /[\s\-().]/g;
const HK_DIGITS = new RegExp(`^\\d{${LIMITS.hkPhoneDigits}}$`);
const ANY_DIGITS = new RegExp(`^\\d{${LIMITS.templatePhoneMinDigits},${LIMITS.templatePhoneMaxDigits}}$`);

/**
 * The forms a phone number is kept in:
 * - `hk`: a send-screen number (SPEC §5, §9), exactly 8 Hong Kong digits, a leading 852/+852 stripped;
 * - `stored`: a template number (SPEC §5), 8 to 15 digits as typed (the country code kept);
 * - `international`: what WhatsApp is given, 8 to 15 digits with 852 put in front of an 8-digit number.
 */
export type PhoneForm = 'hk' | 'stored' | 'international';

/**
 * The one phone normaliser of the product. Separators and a leading "+" are ignored, integers from a
 * spreadsheet count as their digits; undefined when what is left is not a number of that form.
 */
export function normalizePhone(value: unknown, form: PhoneForm): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) text = String(value);
  else return undefined;
  const digits = text.trim().replace(SEPARATORS, '').replace(/^\+/, '');
  switch (form) {
    case 'hk': {
      const local =
        digits.length === LIMITS.hkCountryCode.length + LIMITS.hkPhoneDigits && digits.startsWith(LIMITS.hkCountryCode)
          ? digits.slice(LIMITS.hkCountryCode.length)
          : digits;
      return HK_DIGITS.test(local) ? local : undefined;
    }
    case 'stored':
      return ANY_DIGITS.test(digits) ? digits : undefined;
    case 'international': {
      const full = HK_DIGITS.test(digits) ? `${LIMITS.hkCountryCode}${digits}` : digits;
      return ANY_DIGITS.test(full) ? full : undefined;
    }
  }
}
