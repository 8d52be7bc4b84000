import { describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../common/messages.js';
import { OptOutsErrorCode } from '../errors.js';
import { OPT_OUT_LIMITS } from '../limits.js';
import { DEFAULT_OPT_OUT_KEYWORDS, OPT_OUT_MESSAGES } from '../messages.js';
import { optOutSchemas } from '../schemas.js';
import { optOutConfirmationKey, optOutCsvLine } from '../subjects.js';
import { checkOptOutNumbers, isOptOutKeyword, optOutPhoneOf } from '../validation.js';
import { parseIdempotencyKey } from '../../sessions/messages.js';

describe('opt-out rules', () => {
  it('a keyword is the whole message, trimmed, any case and width', () => {
    const keywords = [...DEFAULT_OPT_OUT_KEYWORDS];
    for (const text of ['STOP', ' stop\n', 'Stop', 'ＳＴＯＰ', 'unsubscribe', '退訂', ' 取消訂閱 '])
      expect(isOptOutKeyword(text, keywords)).toBe(true);
    for (const text of ['stop it', 'STOPP', 'please unsubscribe', '', '   ', undefined, 42])
      expect(isOptOutKeyword(text, keywords)).toBe(false);
  });

  it('the sender of an inbound message is a Hong Kong number like a recipient, or nothing', () => {
    expect(optOutPhoneOf('85291234567')).toBe('91234567');
    expect(optOutPhoneOf('85291234567@c.us')).toBe('91234567');
    expect(optOutPhoneOf('+852 9123 4567')).toBe('91234567');
    expect(optOutPhoneOf('91234567')).toBe('91234567');
    expect(optOutPhoneOf('120363025@g.us')).toBeUndefined();
    expect(optOutPhoneOf('status@broadcast')).toBeUndefined();
    expect(optOutPhoneOf('447700900123')).toBeUndefined();
  });

  it('numbers of the add call: normalised, merged, malformed ones named with the spec words', () => {
    expect(checkOptOutNumbers(['+852 9123 4567', '91234567', '', '61234567'])).toEqual({
      ok: true,
      phones: ['91234567', '61234567'],
    });
    const bad = checkOptOutNumbers(['91234567', '123']);
    expect(bad).toMatchObject({ ok: false, code: OptOutsErrorCode.InvalidPhoneNumbers });
    expect(!bad.ok && bad.message.startsWith(MESSAGES.invalidPhoneNumbersPrefix + '123')).toBe(true);
    expect(checkOptOutNumbers([])).toMatchObject({ ok: false, message: MESSAGES.addPhoneNumbersFirst });
    // An object or a list among them is not echoed as "[object Object]": the list is refused as such.
    for (const odd of [{ a: 1 }, ['91234567'], true]) {
      expect(checkOptOutNumbers(['91234567', odd])).toEqual({
        ok: false,
        code: OptOutsErrorCode.InvalidPhoneNumbers,
        message: OPT_OUT_MESSAGES.phoneNumbersNotAList,
      });
    }
    expect(
      checkOptOutNumbers(Array.from({ length: OPT_OUT_LIMITS.addMax + 1 }, (_, i) => String(90_000_000 + i))),
    ).toMatchObject({
      ok: false,
      message: OPT_OUT_MESSAGES.tooManyPhoneNumbers,
    });
  });

  it('settings: at least one keyword, at most 20, each short; a confirmation text', () => {
    const ok = { keywords: ['STOP'], confirmationEnabled: false, confirmationText: 'Bye' };
    expect(optOutSchemas().settings.safeParse(ok).success).toBe(true);
    const message = (v: unknown) => {
      const r = optOutSchemas().settings.safeParse(v);
      return r.success ? undefined : r.error.issues[0]!.message;
    };
    expect(message({ ...ok, keywords: [] })).toBe(OPT_OUT_MESSAGES.keywordsEmpty);
    expect(message({ ...ok, keywords: Array.from({ length: 21 }, (_, i) => `k${i}`) })).toBe(
      OPT_OUT_MESSAGES.keywordsTooMany,
    );
    expect(message({ ...ok, keywords: ['x'.repeat(31)] })).toBe(OPT_OUT_MESSAGES.keywordTooLong);
  });

  it('the confirmation key parses like a job send key; CSV lines need no quoting', () => {
    expect(parseIdempotencyKey(optOutConfirmationKey('ev-1', '91234567'))).toEqual({
      jobId: 'opt-out-ev-1',
      recipient: '91234567',
    });
    expect(optOutCsvLine({ phoneNumber: '91234567', reason: 'keyword', at: '2025-01-01T00:00:00.000Z' })).toBe(
      '91234567,keyword,2025-01-01T00:00:00.000Z',
    );
    expect(OPT_OUT_MESSAGES.willBeSkipped(1)).toBe('1 recipient has opted out and will be skipped');
    expect(OPT_OUT_MESSAGES.willBeSkipped(3)).toBe('3 recipients have opted out and will be skipped');
    expect(OPT_OUT_MESSAGES.skippedAtStart(2, 1)).toBe(
      'Skipped 2 recipients who have opted out and 1 number not on WhatsApp',
    );
  });
});
