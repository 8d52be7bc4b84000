import { describe, expect, it } from '@jest/globals';
import { displayedPhoneDigits, parseIdempotencyKey } from '../index.js';

describe('parseIdempotencyKey', () => {
  it('splits `<jobId>:<recipient>` at the last colon', () => {
    expect(parseIdempotencyKey('3f2c0c1e-9a7b-4d0e-8f7a-1b2c3d4e5f60:91234567')).toEqual({
      jobId: '3f2c0c1e-9a7b-4d0e-8f7a-1b2c3d4e5f60',
      recipient: '91234567',
    });
    expect(parseIdempotencyKey('a:b:85291234567')).toEqual({ jobId: 'a:b', recipient: '85291234567' });
  });

  it('refuses keys that are not a job send', () => {
    for (const key of ['', 'no-colon', ':91234567', 'job-1:']) expect(parseIdempotencyKey(key)).toBeUndefined();
  });
});

describe('displayedPhoneDigits', () => {
  it('shows digits 3 to 11 of an 852 number: the 8-digit Hong Kong number', () => {
    expect(displayedPhoneDigits('85291234567')).toBe('91234567');
  });
});
