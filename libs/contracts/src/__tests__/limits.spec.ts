import { describe, expect, it } from '@jest/globals';
import { estimateMinutes, LIMITS, pollIntervalMs, reviewEstimateMinutes } from '../common/limits.js';
import { invalidPhoneNumbersMessage } from '../common/messages.js';
import { subjectOf } from '../registry/rpc.js';

describe('estimates (SPEC §9)', () => {
  it('uses ceil(4(n-1)/60) with the default 4 s delay', () => {
    expect(estimateMinutes(1)).toBe(0);
    expect(estimateMinutes(2)).toBe(1);
    expect(estimateMinutes(16)).toBe(1);
    expect(estimateMinutes(17)).toBe(2);
    expect(estimateMinutes(100)).toBe(7);
    expect(estimateMinutes(100, 2000)).toBe(4);
  });
  it('review box uses ceil(2n/60)', () => {
    expect(reviewEstimateMinutes(30)).toBe(1);
    expect(reviewEstimateMinutes(31)).toBe(2);
  });
});

describe('polling schedule (SPEC §9)', () => {
  it('steps 1 s → 2 s → 8 s → 10 s by poll count', () => {
    expect(pollIntervalMs(0)).toBe(1000);
    expect(pollIntervalMs(29)).toBe(1000);
    expect(pollIntervalMs(30)).toBe(2000);
    expect(pollIntervalMs(89)).toBe(2000);
    expect(pollIntervalMs(90)).toBe(8000);
    expect(pollIntervalMs(199)).toBe(8000);
    expect(pollIntervalMs(200)).toBe(10_000);
  });
  it('backs off to 15 s after two empty log polls', () => {
    expect(pollIntervalMs(3, 1)).toBe(1000);
    expect(pollIntervalMs(3, 2)).toBe(15_000);
  });
});

describe('subjects', () => {
  it('shards sessions keys and leaves others alone', () => {
    expect(subjectOf('sessions.connect', 2)).toBe('sessions.2.connect');
    expect(subjectOf('templates.stats')).toBe('templates.stats');
    expect(() => subjectOf('sessions.status')).toThrow(RangeError);
  });
  it('formats the invalid numbers message as the spec does', () => {
    expect(invalidPhoneNumbersMessage(['12', 'abc'])).toBe('Invalid phone numbers: 12, abc');
  });
});

describe('templates per user', () => {
  /** A template at every field limit, each character of the text fields given as `char`. */
  const fullTemplate = (char: string) => ({
    id: '00000000-0000-4000-8000-000000000000',
    name: char.repeat(LIMITS.templateNameMax),
    description: char.repeat(LIMITS.templateDescriptionMax),
    message_content: char.repeat(LIMITS.templateMessageMax),
    phone_numbers: Array.from({ length: LIMITS.templatePhoneNumbersMax }, (_, i) =>
      String(10 ** (LIMITS.templatePhoneMaxDigits - 1) + i),
    ),
    category: 'marketing',
    is_favorite: true,
    usage_count: 2 ** 31 - 1,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
  });

  it('all of them, each at every limit, fit well under one NATS message as the list reply', () => {
    // The list reply as the templates service sends it (Nest's packet) and as the gateway answers it.
    const bytes = (char: string) => {
      const templates = Array.from({ length: LIMITS.templatesPerUserMax }, () => fullTemplate(char));
      const packet = { id: 'x'.repeat(64), response: templates, isDisposed: true };
      return Buffer.byteLength(JSON.stringify(packet));
    };
    // U+0001 is escaped as \u0001 (6 bytes): the costliest character a field can hold (NUL is dropped;
    // a lone surrogate is stored as U+FFFD, 3 bytes). CJK is 3 bytes, `"` 2.
    const worst = Math.max(...['\u0001', '中', '"', '\ufffd'].map(bytes));
    const room = LIMITS.natsMaxPayloadBytes - LIMITS.natsEnvelopeBytes;
    expect(worst).toBeLessThan(room * 0.7);
  });
});
