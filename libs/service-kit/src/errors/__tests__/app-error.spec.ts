import { describe, expect, it } from '@jest/globals';
import { CommonErrorCode, ErrorKind } from '@bns/contracts';
import { AppError } from '../app-error.js';

/** The frames of an error's stack ("    at …" lines). */
const frames = (e: Error) => (e.stack ?? '').split('\n').filter((l) => l.trimStart().startsWith('at ')).length;

describe('AppError stack traces', () => {
  it('an answer (validation, not found, conflict, unavailable) carries none; an internal error does', () => {
    expect(frames(AppError.validation('X', 'bad'))).toBe(0);
    expect(frames(AppError.notFound())).toBe(0);
    expect(frames(AppError.conflict('X', 'taken'))).toBe(0);
    expect(frames(AppError.unavailable())).toBe(0);
    expect(frames(AppError.internal())).toBeGreaterThan(0);
    // The message and fields are as before.
    const e = AppError.notFound(CommonErrorCode.NotFound, 'No such job');
    expect(e).toBeInstanceOf(Error);
    expect(e.stack).toContain('No such job');
    expect(e.toPayload()).toEqual({ kind: ErrorKind.NotFound, code: CommonErrorCode.NotFound, message: 'No such job' });
  });

  it('one made from a reply carries none, of any kind, and the process limit is left as it was', () => {
    const before = Error.stackTraceLimit;
    expect(
      frames(
        AppError.fromPayload({ kind: ErrorKind.Internal, code: CommonErrorCode.Internal, message: 'x', errorId: 'e1' }),
      ),
    ).toBe(0);
    expect(
      frames(AppError.fromPayload({ kind: ErrorKind.NotFound, code: CommonErrorCode.NotFound, message: 'x' })),
    ).toBe(0);
    expect(Error.stackTraceLimit).toBe(before);
    expect(frames(new Error('plain'))).toBeGreaterThan(0);
    expect(frames(AppError.internal())).toBeGreaterThan(0);
  });
});
