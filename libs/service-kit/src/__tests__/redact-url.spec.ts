import { describe, expect, it } from '@jest/globals';
import { redactUrl } from '../logging/logging.js';

describe('redactUrl: phone numbers never reach logs or trace names', () => {
  it('masks the phone of an opt-out path and the search, and leaves every other URL alone', () => {
    expect(redactUrl('/api/opt-outs/user_1/91234567')).toBe('/api/opt-outs/user_1/[redacted]');
    expect(redactUrl('/api/opt-outs/user_1?limit=20&q=9123&cursor=abc')).toBe('/api/opt-outs/user_1?limit=20&q=[redacted]&cursor=abc');
    expect(redactUrl('/api/opt-outs/user_1?q=9123')).toBe('/api/opt-outs/user_1?q=[redacted]');
    expect(redactUrl('/api/opt-outs/user_1/settings')).toBe('/api/opt-outs/user_1/settings');
    expect(redactUrl('/api/opt-outs/user_1/export?format=csv')).toBe('/api/opt-outs/user_1/export?format=csv');
    expect(redactUrl('/job-logs/3f0c?since=1700000000000')).toBe('/job-logs/3f0c?since=1700000000000');
  });
});
