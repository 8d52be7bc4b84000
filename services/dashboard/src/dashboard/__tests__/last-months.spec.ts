import { describe, expect, it } from '@jest/globals';
import { lastMonths } from '../dashboard.service.js';

describe('lastMonths', () => {
  it('lists the last 12 UTC months oldest first, across a year boundary', () => {
    const months = lastMonths(new Date('2025-02-15T12:00:00Z'));
    expect(months).toHaveLength(12);
    expect(months[0]).toBe('2024-03');
    expect(months[11]).toBe('2025-02');
  });

  it('uses the UTC month even late on the last day of a month elsewhere', () => {
    expect(lastMonths(new Date('2025-01-01T00:30:00Z'), 1)).toEqual(['2025-01']);
  });
});
