import { describe, expect, it } from '@jest/globals';
import { estimateMinutes, pollIntervalMs, reviewEstimateMinutes } from '../common/limits.js';
import { invalidPhoneNumbersMessage } from '../common/messages.js';
import { subjectOf } from '../common/rpc.js';

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
