import { describe, expect, it } from '@jest/globals';
import { RESULTS_LIMITS } from '../limits.js';
import { RESULTS_MESSAGES } from '../messages.js';
import { jobExportQuerySchema, jobHistoryQuerySchema, jobResultsQuerySchema, reportSearchDigits } from '../schemas.js';

const messages = (r: { success: boolean; error?: { issues: Array<{ message: string }> } }) =>
  r.success ? [] : r.error!.issues.map((i) => i.message);

describe('results query schemas', () => {
  it('take absent values as the defaults', () => {
    expect(jobResultsQuerySchema.parse({})).toEqual({ limit: RESULTS_LIMITS.reportPageDefault });
    expect(jobHistoryQuerySchema.parse({})).toEqual({ limit: RESULTS_LIMITS.historyPageDefault, active: false });
    expect(jobHistoryQuerySchema.parse({ active: 'true' })).toEqual({
      limit: RESULTS_LIMITS.historyPageDefault,
      active: true,
    });
    expect(jobExportQuerySchema.parse({})).toEqual({ format: 'csv', tz: 'UTC' });
    expect(jobResultsQuerySchema.parse({ limit: '7', cursor: 'abc_-1', status: 'sent,failed' })).toEqual({
      limit: 7,
      cursor: 'abc_-1',
      status: ['sent', 'failed'],
    });
  });

  it('read a report search as the digits of an 8-digit number, with or without the 852 code', () => {
    for (const q of ['91234567', '85291234567', '+852 9123 4567', '(852) 9123-4567'])
      expect(jobResultsQuerySchema.parse({ q }).q).toBe('91234567');
    expect(reportSearchDigits('8529')).toBe('8529');
    expect(reportSearchDigits('852912')).toBe('852912');
    expect(reportSearchDigits('852912345')).toBe('912345');
    expect(jobResultsQuerySchema.parse({ q: ' ' }).q).toBeUndefined();
    for (const q of ['abc', ['1', '2'], '1'.repeat(RESULTS_LIMITS.searchMaxDigits + 1)])
      expect(messages(jobResultsQuerySchema.safeParse({ q }))).toEqual([RESULTS_MESSAGES.invalidReportSearch]);
  });

  it('answer a repeated name (a list) or any other shape with the field’s own words, never the parser’s', () => {
    const repeated = ['1', '2'];
    expect(messages(jobResultsQuerySchema.safeParse({ limit: repeated }))).toEqual([
      RESULTS_MESSAGES.invalidLimit(RESULTS_LIMITS.reportPageMax),
    ]);
    expect(messages(jobHistoryQuerySchema.safeParse({ limit: repeated }))).toEqual([
      RESULTS_MESSAGES.invalidLimit(RESULTS_LIMITS.historyPageMax),
    ]);
    expect(messages(jobResultsQuerySchema.safeParse({ cursor: repeated }))).toEqual([RESULTS_MESSAGES.invalidCursor]);
    expect(messages(jobHistoryQuerySchema.safeParse({ cursor: { a: '1' } }))).toEqual([RESULTS_MESSAGES.invalidCursor]);
    expect(messages(jobHistoryQuerySchema.safeParse({ cursor: 'x'.repeat(201) }))).toEqual([
      RESULTS_MESSAGES.invalidCursor,
    ]);
    expect(messages(jobExportQuerySchema.safeParse({ format: ['csv', 'csv'] }))).toEqual([
      RESULTS_MESSAGES.invalidFormat,
    ]);
    expect(messages(jobExportQuerySchema.safeParse({ format: '' }))).toEqual([RESULTS_MESSAGES.invalidFormat]);
    expect(messages(jobResultsQuerySchema.safeParse({ limit: true }))).toEqual([
      RESULTS_MESSAGES.invalidLimit(RESULTS_LIMITS.reportPageMax),
    ]);
    for (const active of [['true', 'true'], 'yes', '1', { a: 'true' }]) {
      expect(messages(jobHistoryQuerySchema.safeParse({ active }))).toEqual([RESULTS_MESSAGES.invalidActive]);
    }
  });
});
