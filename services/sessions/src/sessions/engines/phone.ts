import { LIMITS } from '@bns/contracts';

/** Digits of a number in international form: 8-digit Hong Kong numbers get their 852 prefix. */
export function internationalDigits(number: string): string {
  const digits = number.replace(/\D/g, '');
  return digits.length === LIMITS.hkPhoneDigits ? `${LIMITS.hkCountryCode}${digits}` : digits;
}
