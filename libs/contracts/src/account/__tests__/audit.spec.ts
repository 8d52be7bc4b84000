import { describe, expect, it } from '@jest/globals';
import { ACCOUNT_MESSAGES } from '../messages.js';
import { AuditQuerySchema, truncateAddress } from '../audit.js';

describe('truncateAddress', () => {
  it('keeps an IPv4 address to its /24, a mapped one too', () => {
    expect(truncateAddress('203.0.113.77')).toBe('203.0.113.0/24');
    expect(truncateAddress('::ffff:198.51.100.9')).toBe('198.51.100.0/24');
  });
  it('keeps an IPv6 address to its /48', () => {
    expect(truncateAddress('2001:db8:1234:5678::1')).toBe('2001:db8:1234::/48');
    expect(truncateAddress('2001:0db8:0001:ffff:0:0:0:1')).toBe('2001:db8:1::/48');
    expect(truncateAddress('::1')).toBe('0:0:0::/48');
    expect(truncateAddress('fe80::1%eth0')).toBe('fe80:0:0::/48');
  });
  it('keeps nothing of what is not an address', () => {
    expect(truncateAddress(undefined)).toBeUndefined();
    expect(truncateAddress('unknown')).toBeUndefined();
    expect(truncateAddress('300.1.1.1')).toBeUndefined();
    expect(truncateAddress('1:2:3')).toBeUndefined();
  });
});

describe('AuditQuerySchema', () => {
  it('takes a kind, a cursor and a limit up to 200, and words each refusal', () => {
    expect(AuditQuerySchema.parse({})).toEqual({ kind: undefined, cursor: undefined, limit: 50 });
    expect(AuditQuerySchema.parse({ kind: 'auth.signed_in', limit: '200', cursor: 'abc' })).toEqual({
      kind: 'auth.signed_in',
      cursor: 'abc',
      limit: 200,
    });
    expect(AuditQuerySchema.safeParse({ limit: '201' }).error?.issues[0]?.message).toBe(
      ACCOUNT_MESSAGES.auditLimitInvalid,
    );
    expect(AuditQuerySchema.safeParse({ kind: 'auth.hacked' }).error?.issues[0]?.message).toBe(
      ACCOUNT_MESSAGES.auditKindInvalid,
    );
  });
});
