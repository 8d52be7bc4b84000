import { describe, expect, it } from '@jest/globals';
import type { Request, Response } from 'express';
import helmet from 'helmet';
import { securityHeaderSets, securityHeaders } from '../security-headers.js';

/** Runs the middleware for `path` and answers the headers it set (names lower-cased). */
function headersFor(path: string, clerkOrigin?: string): Record<string, string> {
  const set: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => (set[name.toLowerCase()] = String(value)),
  } as unknown as Response;
  let passed = false;
  securityHeaders(securityHeaderSets({ clerkOrigin }))({ path } as Request, res, () => (passed = true));
  expect(passed).toBe(true);
  return set;
}

describe('securityHeaders', () => {
  it('sets on every answer what helmet would, computed once', () => {
    const page = headersFor('/templates');
    expect(page['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(page['content-security-policy']).not.toContain('unsafe-inline');
    expect(page['x-content-type-options']).toBe('nosniff');
    expect(page['x-frame-options']).toBe('DENY');
    expect(page['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(page['strict-transport-security']).toBeTruthy();
    expect(page['cache-control']).toBeUndefined();
    // Every header helmet itself sets with helmet's defaults is there (none lost by computing them once).
    const byHelmet: string[] = [];
    helmet()(
      {} as Request,
      {
        setHeader: (name: string) => byHelmet.push(name.toLowerCase()),
        removeHeader: () => undefined,
      } as unknown as Response,
      () => undefined,
    );
    expect(Object.keys(page).sort()).toEqual(byHelmet.filter((h) => h !== 'cross-origin-embedder-policy').sort());
  });

  it('keeps authenticated JSON out of caches and lets the API docs use inline styles', () => {
    expect(headersFor('/job-status/abc')['cache-control']).toBe('no-store');
    expect(headersFor('/api/docs')['content-security-policy']).toContain("style-src 'self' 'unsafe-inline'");
    expect(headersFor('/api/templates/u1')['content-security-policy']).not.toContain('unsafe-inline');
  });

  it('lets the Clerk origin load its script in Clerk mode', () => {
    expect(headersFor('/', 'https://clerk.shop.test')['content-security-policy']).toContain(
      "script-src 'self' https://clerk.shop.test",
    );
  });
});
