import { randomUUID } from 'node:crypto';
import { CommonErrorCode, ErrorKind, MESSAGES, isErrorPayload, type ErrorPayload } from '@bns/contracts';

/** Set while `fromPayload` makes an error: none of any kind gets a stack trace then. */
let fromWire = false;

/**
 * The one error type services throw on purpose. Anything else is an internal error with an id.
 * Only internal ones get a stack trace: the others are answers (a 404, a refusal), thrown on hot
 * paths (a poll for an unknown job), and capturing a trace was 4% of the jobs service's CPU samples
 * on such polls (gateway-pollers with BENCH_PROFILE_SERVICE=jobs); nothing reads their stacks.
 */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly extra: { errors?: Record<string, string>; details?: Record<string, unknown>; errorId?: string } = {},
  ) {
    const limit = Error.stackTraceLimit;
    if (fromWire || kind !== ErrorKind.Internal) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
  }

  static validation(
    code: string,
    message: string,
    errors?: Record<string, string>,
    details?: Record<string, unknown>,
  ): AppError {
    return new AppError(ErrorKind.Validation, code, message, { errors, details });
  }
  static notFound(code: string = CommonErrorCode.NotFound, message: string = MESSAGES.notFound): AppError {
    return new AppError(ErrorKind.NotFound, code, message);
  }
  static conflict(code: string, message: string, details?: Record<string, unknown>): AppError {
    return new AppError(ErrorKind.Conflict, code, message, { details });
  }
  static unavailable(message: string = MESSAGES.serviceUnavailable, details?: Record<string, unknown>): AppError {
    return new AppError(ErrorKind.Unavailable, CommonErrorCode.ServiceUnavailable, message, { details });
  }
  static internal(errorId: string = randomUUID()): AppError {
    return new AppError(ErrorKind.Internal, CommonErrorCode.Internal, MESSAGES.internal, { errorId });
  }

  /**
   * An error another service answered. Made without a stack trace: here it would only show the NATS
   * reply path, and capturing one was a visible share of the gateway's CPU on a poll answered 404.
   */
  static fromPayload(payload: ErrorPayload): AppError {
    const { kind, code, message, errors, details, errorId } = payload;
    fromWire = true;
    try {
      return new AppError(kind, code, message, { errors, details, errorId });
    } finally {
      fromWire = false;
    }
  }

  /** Whatever came back over the wire: a typed error, or an unknown failure turned internal. */
  static fromUnknown(value: unknown): AppError {
    if (value instanceof AppError) return value;
    if (isErrorPayload(value)) return AppError.fromPayload(value);
    return AppError.internal();
  }

  toPayload(): ErrorPayload {
    return { kind: this.kind, code: this.code, message: this.message, ...this.extra };
  }
}

/** The single mapping of error kinds to HTTP statuses. Exhaustive: a new kind fails to compile here. */
export function httpStatusOf(kind: ErrorKind): number {
  switch (kind) {
    case ErrorKind.Validation:
      return 400;
    case ErrorKind.Unauthorized:
      return 401;
    case ErrorKind.Forbidden:
      return 403;
    case ErrorKind.NotFound:
      return 404;
    case ErrorKind.Conflict:
      return 409;
    case ErrorKind.PayloadTooLarge:
      return 413;
    case ErrorKind.RateLimited:
      return 429;
    case ErrorKind.Unavailable:
      return 503;
    case ErrorKind.Internal:
      return 500;
  }
}
