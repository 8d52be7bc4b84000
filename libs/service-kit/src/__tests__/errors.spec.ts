import { describe, expect, it } from '@jest/globals';
import { ErrorKind } from '@bns/contracts';
import { AppError, httpStatusOf } from '../errors/app-error.js';

describe('error model', () => {
  it('maps every kind to its HTTP status', () => {
    const expected: Record<ErrorKind, number> = {
      [ErrorKind.Validation]: 400,
      [ErrorKind.Unauthorized]: 401,
      [ErrorKind.Forbidden]: 403,
      [ErrorKind.NotFound]: 404,
      [ErrorKind.Conflict]: 409,
      [ErrorKind.PayloadTooLarge]: 413,
      [ErrorKind.RateLimited]: 429,
      [ErrorKind.Unavailable]: 503,
      [ErrorKind.Internal]: 500,
    };
    for (const kind of Object.values(ErrorKind)) expect(httpStatusOf(kind)).toBe(expected[kind]);
  });

  it('round-trips through the wire payload', () => {
    const e = AppError.validation('X', 'Please fix the form errors', { name: 'Template name is required' });
    const back = AppError.fromUnknown(JSON.parse(JSON.stringify(e.toPayload())));
    expect(back).toBeInstanceOf(AppError);
    expect(back.kind).toBe(ErrorKind.Validation);
    expect(back.extra.errors).toEqual({ name: 'Template name is required' });
  });

  it('turns anything unknown into an internal error with an id and no detail', () => {
    const e = AppError.fromUnknown({ status: 'error', message: 'Internal server error' });
    expect(e.kind).toBe(ErrorKind.Internal);
    expect(e.extra.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.message).not.toMatch(/Internal server error/);
  });
});
