import { describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../common/messages.js';
import { TEMPLATE_MESSAGES } from '../messages.js';
import { MEDIA_MESSAGES } from '../../media/messages.js';
import {
  duplicateTemplateInput,
  duplicateTemplateName,
  normalizePhoneNumber,
  parsePhoneNumbers,
  phoneNumberToAddError,
  templateListQueryString,
  validatePhoneNumbers,
  validateTemplateCreate,
  validateTemplateListQuery,
  validateTemplateUpdate,
} from '../validation.js';

const valid = { name: 'Welcome', message_content: 'Hello *there*' };
const numbers = (n: number, start = 10_000_000) => Array.from({ length: n }, (_, i) => String(start + i));

function errorsOf(result: ReturnType<typeof validateTemplateCreate | typeof validateTemplateUpdate>) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.errors;
}

describe('validateTemplateCreate (SPEC §5 template form)', () => {
  it('accepts the minimum and fills the defaults', () => {
    expect(validateTemplateCreate(valid)).toEqual({
      ok: true,
      value: {
        name: 'Welcome',
        description: '',
        message_content: 'Hello *there*',
        phone_numbers: [],
        category: 'general',
        is_favorite: false,
        mediaId: null,
      },
    });
  });

  it('keeps every field, trims name and description, ignores unknown fields', () => {
    const result = validateTemplateCreate({
      name: '  Promo  ',
      description: ' spring ',
      message_content: '  Line 1\nLine 2  ',
      phone_numbers: ['85212345678', '+852 9876-5432'],
      category: 'marketing',
      is_favorite: true,
      mediaId: 'med_3q2hYzX9c1Vb8uKq0aTn7w',
      usage_count: 99,
      id: 'x',
      user_id: 'someone-else',
    });
    expect(result).toEqual({
      ok: true,
      value: {
        name: 'Promo',
        description: 'spring',
        message_content: '  Line 1\nLine 2  ',
        phone_numbers: ['85212345678', '85298765432'],
        category: 'marketing',
        is_favorite: true,
        mediaId: 'med_3q2hYzX9c1Vb8uKq0aTn7w',
      },
    });
  });

  it('mediaId: an attachment id or null; anything else names no attachment', () => {
    expect(validateTemplateUpdate({ mediaId: null })).toEqual({ ok: true, value: { mediaId: null } });
    expect(validateTemplateUpdate({ name: 'x' })).toEqual({ ok: true, value: { name: 'x' } });
    for (const mediaId of ['', '../etc/passwd', 'a'.repeat(65), 42, {}]) {
      expect(errorsOf(validateTemplateCreate({ ...valid, mediaId }))).toEqual({ mediaId: MEDIA_MESSAGES.notFound });
    }
  });

  it('name: required, at most 100 characters', () => {
    expect(errorsOf(validateTemplateCreate({ message_content: 'x' }))).toEqual({ name: MESSAGES.templateNameRequired });
    expect(errorsOf(validateTemplateCreate({ ...valid, name: '   ' })).name).toBe('Template name is required');
    expect(errorsOf(validateTemplateCreate({ ...valid, name: null })).name).toBe('Template name is required');
    expect(errorsOf(validateTemplateCreate({ ...valid, name: 'n'.repeat(101) })).name).toBe(
      'Template name must be 100 characters or less',
    );
    expect(validateTemplateCreate({ ...valid, name: 'n'.repeat(100) }).ok).toBe(true);
  });

  it('message_content: required, at most 1000 characters', () => {
    expect(errorsOf(validateTemplateCreate({ name: 'n' }))).toEqual({ message_content: 'Message content is required' });
    expect(errorsOf(validateTemplateCreate({ ...valid, message_content: ' \n ' })).message_content).toBe(
      'Message content is required',
    );
    expect(errorsOf(validateTemplateCreate({ ...valid, message_content: 'm'.repeat(1001) })).message_content).toBe(
      'Message content must be 1000 characters or less',
    );
    expect(validateTemplateCreate({ ...valid, message_content: 'm'.repeat(1000) }).ok).toBe(true);
  });

  it('a name or message of only invisible characters is blank (zero-width space, word joiner, BOM, ...)', () => {
    for (const invisible of [
      '\u200b\u200b',
      '\u2060',
      '\ufeff',
      ' \u200b \u2060\ufeff\u200d ',
      '\u00ad\u200e\u3164',
      '\u2800',
      '\u0001\u007f',
    ]) {
      expect(errorsOf(validateTemplateCreate({ ...valid, name: invisible })).name).toBe(MESSAGES.templateNameRequired);
      expect(errorsOf(validateTemplateCreate({ ...valid, message_content: invisible })).message_content).toBe(
        MESSAGES.messageContentRequired,
      );
      expect(errorsOf(validateTemplateUpdate({ name: invisible })).name).toBe(MESSAGES.templateNameRequired);
    }
    // Past the length limit too, the field is blank first.
    expect(errorsOf(validateTemplateCreate({ ...valid, name: '\u200b'.repeat(101) })).name).toBe(
      MESSAGES.templateNameRequired,
    );
    // Invisible characters next to visible ones are the user's text: kept.
    expect(validateTemplateCreate({ ...valid, name: 'Pro\u200bmo', message_content: '\u2060Hi' })).toMatchObject({
      ok: true,
      value: { name: 'Pro\u200bmo', message_content: '\u2060Hi' },
    });
    // A single emoji or CJK character is visible.
    expect(validateTemplateCreate({ ...valid, name: '😀', message_content: '中' }).ok).toBe(true);
  });

  it('description: optional, at most 500 characters', () => {
    expect(validateTemplateCreate({ ...valid, description: null }).ok).toBe(true);
    expect(validateTemplateCreate({ ...valid, description: 'd'.repeat(500) }).ok).toBe(true);
    expect(errorsOf(validateTemplateCreate({ ...valid, description: 'd'.repeat(501) })).description).toBe(
      MESSAGES.descriptionTooLong,
    );
  });

  it('category: one of the five; empty means general', () => {
    for (const category of ['general', 'marketing', 'personal', 'business', 'custom']) {
      expect(validateTemplateCreate({ ...valid, category })).toMatchObject({ ok: true, value: { category } });
    }
    expect(validateTemplateCreate({ ...valid, category: '' })).toMatchObject({
      ok: true,
      value: { category: 'general' },
    });
    expect(errorsOf(validateTemplateCreate({ ...valid, category: 'spam' })).category).toBe(MESSAGES.categoryInvalid);
    expect(errorsOf(validateTemplateCreate({ ...valid, category: 'Marketing' })).category).toBe(
      MESSAGES.categoryInvalid,
    );
    expect(errorsOf(validateTemplateCreate({ ...valid, category: 3 })).category).toBe(MESSAGES.categoryInvalid);
  });

  it('wrong JSON types give a field message, never a throw', () => {
    expect(
      errorsOf(
        validateTemplateCreate({
          name: 5,
          message_content: ['a'],
          description: {},
          is_favorite: 'yes',
          phone_numbers: 12,
        }),
      ),
    ).toEqual({
      name: TEMPLATE_MESSAGES.nameNotText,
      message_content: TEMPLATE_MESSAGES.messageContentNotText,
      description: TEMPLATE_MESSAGES.descriptionNotText,
      is_favorite: TEMPLATE_MESSAGES.isFavoriteNotBoolean,
      phone_numbers: TEMPLATE_MESSAGES.phoneNumbersNotList,
    });
  });

  it('drops NUL characters, which Postgres text cannot store', () => {
    expect(
      validateTemplateCreate({ name: 'a\u0000b', message_content: 'x\u0000', description: '\u0000' }),
    ).toMatchObject({
      ok: true,
      value: { name: 'ab', message_content: 'x', description: '' },
    });
    expect(errorsOf(validateTemplateCreate({ name: '\u0000', message_content: '\u0000' }))).toEqual({
      name: 'Template name is required',
      message_content: 'Message content is required',
    });
  });

  it('reports every failing field at once with the form message', () => {
    const result = validateTemplateCreate({ name: '', message_content: '', phone_numbers: ['1'], category: 'x' });
    expect(result).toEqual({
      ok: false,
      message: 'Please fix the form errors',
      errors: {
        name: 'Template name is required',
        message_content: 'Message content is required',
        phone_numbers: 'Phone number must be 8-15 digits. Invalid phone numbers: 1',
        category: MESSAGES.categoryInvalid,
      },
    });
  });

  it('a body that is not an object is refused as a whole', () => {
    for (const body of [[1, 2], 'text', 42, true]) {
      expect(validateTemplateCreate(body)).toEqual({ ok: false, message: TEMPLATE_MESSAGES.bodyNotObject, errors: {} });
    }
    // No body at all is an empty form.
    expect(errorsOf(validateTemplateCreate(undefined))).toEqual({
      name: 'Template name is required',
      message_content: 'Message content is required',
    });
  });
});

describe('phone numbers', () => {
  it('each is 8 to 15 digits once separators and a leading + are removed', () => {
    expect(normalizePhoneNumber('12345678')).toBe('12345678');
    expect(normalizePhoneNumber('123456789012345')).toBe('123456789012345');
    expect(normalizePhoneNumber('+852 1234-5678')).toBe('85212345678');
    expect(normalizePhoneNumber('(852) 1234.5678')).toBe('85212345678');
    expect(normalizePhoneNumber(85212345678)).toBe('85212345678');
    expect(normalizePhoneNumber('1234567')).toBeUndefined();
    expect(normalizePhoneNumber('1234567890123456')).toBeUndefined();
    expect(normalizePhoneNumber('1234abcd')).toBeUndefined();
    expect(normalizePhoneNumber('++85212345678')).toBeUndefined();
    expect(normalizePhoneNumber(1.5)).toBeUndefined();
    expect(normalizePhoneNumber(null)).toBeUndefined();
    expect(normalizePhoneNumber({})).toBeUndefined();
  });

  it('accepts an array or a JSON string of one; null and "" are none', () => {
    expect(parsePhoneNumbers(['12345678'])).toEqual(['12345678']);
    expect(parsePhoneNumbers('["12345678","87654321"]')).toEqual(['12345678', '87654321']);
    expect(parsePhoneNumbers('')).toEqual([]);
    expect(parsePhoneNumbers(null)).toEqual([]);
    expect(parsePhoneNumbers(undefined)).toEqual([]);
    expect(parsePhoneNumbers('12345678')).toBeUndefined();
    expect(parsePhoneNumbers('{"a":1}')).toBeUndefined();
    expect(parsePhoneNumbers('[oops')).toBeUndefined();
    expect(parsePhoneNumbers({ 0: '12345678' })).toBeUndefined();
    expect(validateTemplateCreate({ ...valid, phone_numbers: '["12345678"]' })).toMatchObject({
      ok: true,
      value: { phone_numbers: ['12345678'] },
    });
  });

  it('one bad number: the rule, and the number named', () => {
    expect(validatePhoneNumbers(['12345678', '123'])).toEqual({
      ok: false,
      error: 'Phone number must be 8-15 digits. Invalid phone numbers: 123',
    });
  });

  it('several bad numbers: "Invalid phone numbers: a, b"', () => {
    expect(validatePhoneNumbers(['123', '12345678', 'abc', 5])).toEqual({
      ok: false,
      error: 'Invalid phone numbers: 123, abc, 5',
    });
    const long = 'x'.repeat(100);
    expect(validatePhoneNumbers([long, '1'])).toEqual({
      ok: false,
      error: `Invalid phone numbers: ${'x'.repeat(32)}…, 1`,
    });
  });

  it('no duplicates, also when they differ only by formatting', () => {
    expect(validatePhoneNumbers(['12345678', '12345678'])).toEqual({ ok: false, error: 'Phone number already added' });
    expect(validatePhoneNumbers(['85212345678', '+852 1234 5678'])).toEqual({
      ok: false,
      error: 'Phone number already added',
    });
  });

  it('at most 200', () => {
    expect(validatePhoneNumbers(numbers(200))).toEqual({ ok: true, value: numbers(200) });
    expect(validatePhoneNumbers(numbers(201))).toEqual({ ok: false, error: 'Maximum 200 phone numbers allowed' });
    expect(validatePhoneNumbers(JSON.stringify(numbers(201)))).toEqual({
      ok: false,
      error: 'Maximum 200 phone numbers allowed',
    });
  });

  it('the form check for adding one number to a list', () => {
    expect(phoneNumberToAddError(['12345678'], '87654321')).toBeUndefined();
    expect(phoneNumberToAddError(['12345678'], '1234')).toBe('Phone number must be 8-15 digits');
    expect(phoneNumberToAddError(['12345678'], '1234 5678')).toBe('Phone number already added');
    expect(phoneNumberToAddError(numbers(200), '99999999')).toBe('Maximum 200 phone numbers allowed');
  });
});

describe('validateTemplateUpdate (full or partial)', () => {
  it('checks and returns only the fields present', () => {
    expect(validateTemplateUpdate({ is_favorite: true })).toEqual({ ok: true, value: { is_favorite: true } });
    expect(validateTemplateUpdate({ description: null, phone_numbers: null })).toEqual({
      ok: true,
      value: { description: '', phone_numbers: [] },
    });
    expect(validateTemplateUpdate({})).toEqual({ ok: true, value: {} });
    expect(validateTemplateUpdate(undefined)).toEqual({ ok: true, value: {} });
    expect(validateTemplateUpdate({ unknown: 1 })).toEqual({ ok: true, value: {} });
  });

  it('a present field must still be valid; required fields cannot be cleared', () => {
    expect(errorsOf(validateTemplateUpdate({ is_favorite: 'yes' }))).toEqual({
      is_favorite: TEMPLATE_MESSAGES.isFavoriteNotBoolean,
    });
    expect(errorsOf(validateTemplateUpdate({ name: '' }))).toEqual({ name: 'Template name is required' });
    expect(errorsOf(validateTemplateUpdate({ message_content: null }))).toEqual({
      message_content: 'Message content is required',
    });
    expect(validateTemplateUpdate([])).toEqual({ ok: false, message: TEMPLATE_MESSAGES.bodyNotObject, errors: {} });
  });
});

describe('duplicate', () => {
  it('appends " (Copy)" and stays within 100 characters', () => {
    expect(duplicateTemplateName('Welcome')).toBe('Welcome (Copy)');
    const copy = duplicateTemplateName('n'.repeat(100));
    expect(copy).toBe(`${'n'.repeat(93)} (Copy)`);
    expect(copy).toHaveLength(100);
    expect(validateTemplateCreate({ ...valid, name: copy }).ok).toBe(true);
  });

  it('never splits a surrogate pair when cutting', () => {
    const copy = duplicateTemplateName(`${'n'.repeat(92)}😀${'n'.repeat(10)}`);
    expect(copy).toBe(`${'n'.repeat(92)} (Copy)`);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(copy)).toBe(false);
  });

  it('resets favorite and copies the content', () => {
    const source = {
      name: 'Promo',
      description: 'd',
      message_content: 'm',
      phone_numbers: ['12345678'],
      category: 'business' as const,
      is_favorite: true,
      mediaId: 'med_abc',
    };
    const copy = duplicateTemplateInput(source);
    expect(copy).toEqual({ ...source, name: 'Promo (Copy)', is_favorite: false });
    expect(copy.phone_numbers).not.toBe(source.phone_numbers);
    expect(duplicateTemplateInput({ ...source, mediaId: undefined }).mediaId).toBeNull();
  });
});

describe('list query', () => {
  it('optional category and is_favorite filters', () => {
    expect(validateTemplateListQuery({})).toEqual({ ok: true, value: {} });
    expect(validateTemplateListQuery({ category: '', is_favorite: '' })).toEqual({ ok: true, value: {} });
    expect(validateTemplateListQuery({ category: 'all' })).toEqual({ ok: true, value: {} });
    expect(validateTemplateListQuery({ category: 'marketing', is_favorite: 'true' })).toEqual({
      ok: true,
      value: { category: 'marketing', is_favorite: true },
    });
    expect(validateTemplateListQuery({ is_favorite: 'false' })).toEqual({ ok: true, value: { is_favorite: false } });
  });

  it('unknown values are refused, not ignored', () => {
    expect(validateTemplateListQuery({ category: 'spam' })).toEqual({
      ok: false,
      message: MESSAGES.categoryInvalid,
      errors: { category: MESSAGES.categoryInvalid },
    });
    expect(validateTemplateListQuery({ category: ['general', 'custom'] })).toMatchObject({ ok: false });
    expect(validateTemplateListQuery({ is_favorite: 'yes' })).toEqual({
      ok: false,
      message: TEMPLATE_MESSAGES.favoriteFilterInvalid,
      errors: { is_favorite: TEMPLATE_MESSAGES.favoriteFilterInvalid },
    });
  });

  it('the web builds the same query string the server reads', () => {
    expect(templateListQueryString({})).toBe('');
    expect(templateListQueryString({ category: 'custom', is_favorite: true })).toBe(
      '?category=custom&is_favorite=true',
    );
    const parsed = Object.fromEntries(
      new URLSearchParams(templateListQueryString({ category: 'personal', is_favorite: false })),
    );
    expect(validateTemplateListQuery(parsed)).toEqual({
      ok: true,
      value: { category: 'personal', is_favorite: false },
    });
  });
});
