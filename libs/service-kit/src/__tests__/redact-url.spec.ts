import { describe, expect, it } from '@jest/globals';
import { redactUrl } from '../logging/logging.js';

describe('redactUrl: phone numbers never reach logs or trace names', () => {
  it('masks the phone of an opt-out path and the search, and leaves every other URL alone', () => {
    expect(redactUrl('/api/opt-outs/user_1/91234567')).toBe('/api/opt-outs/user_1/[redacted]');
    expect(redactUrl('/api/opt-outs/user_1?limit=20&q=9123&cursor=abc')).toBe(
      '/api/opt-outs/user_1?limit=20&q=[redacted]&cursor=abc',
    );
    expect(redactUrl('/api/opt-outs/user_1?q=9123')).toBe('/api/opt-outs/user_1?q=[redacted]');
    expect(redactUrl('/api/opt-outs/user_1/settings')).toBe('/api/opt-outs/user_1/settings');
    expect(redactUrl('/api/opt-outs/user_1/export?format=csv')).toBe('/api/opt-outs/user_1/export?format=csv');
    expect(redactUrl('/job-logs/3f0c?since=1700000000000')).toBe('/job-logs/3f0c?since=1700000000000');
  });

  it('masks them whatever the case of the route (routing ignores it) and wherever a path segment looks like a number', () => {
    expect(redactUrl('/API/opt-outs/user_1/+85291234567')).toBe('/API/opt-outs/user_1/[redacted]');
    expect(redactUrl('/Api/Opt-Outs/user_1?Q=9123')).toBe('/Api/Opt-Outs/user_1?Q=[redacted]');
    expect(redactUrl('/api/opt-out/user_1/9123%204567')).toBe('/api/opt-out/user_1/[redacted]');
    expect(redactUrl('/anything/(852)%209123-4567/x')).toBe('/anything/[redacted]/x');
    // Ids stay readable: a UUID, a user id, a short number.
    expect(redactUrl('/job-status/3f0c2a9e-1b2c-4d5e-8f90-123456789abc')).toBe(
      '/job-status/3f0c2a9e-1b2c-4d5e-8f90-123456789abc',
    );
    expect(redactUrl('/api/templates/user_dev_0123456789/stats')).toBe('/api/templates/user_dev_0123456789/stats');
    expect(redactUrl('/api/jobs/u?limit=20')).toBe('/api/jobs/u?limit=20');
  });
});
