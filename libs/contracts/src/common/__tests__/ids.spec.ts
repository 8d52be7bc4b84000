import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { isUuid } from '../ids.js';

describe('isUuid (the form of the ids the services make)', () => {
  it('takes a UUID of any version and case, and nothing else', () => {
    expect(isUuid(randomUUID())).toBe(true);
    expect(isUuid('0B6C3F0E-8A52-4D6E-9F39-3C1E2B7D9A10')).toBe(true);
    expect(isUuid('00000000-0000-4000-8000-000000000000')).toBe(true);
    for (const bad of [
      '',
      'not-a-job',
      `${randomUUID()}x`,
      ` ${randomUUID()}`,
      randomUUID().replaceAll('-', ''),
      'x'.repeat(5000),
      42,
      null,
      undefined,
      {},
    ]) {
      expect(isUuid(bad)).toBe(false);
    }
  });
});
