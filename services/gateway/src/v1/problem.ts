import type { Response } from 'express';
import {
  CommonErrorCode,
  ErrorKind,
  IntegrationsErrorCode,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  REQUEST_MESSAGES,
  type Problem,
  type ProblemName,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';

/** A problem of `name` with this occurrence's words. */
export function problem(name: ProblemName, detail: string, extra: Pick<Problem, 'errors' | 'errorId'> = {}): Problem {
  const { type, title, status } = PROBLEMS[name];
  return {
    type,
    title,
    status,
    detail,
    ...(extra.errors && Object.keys(extra.errors).length ? { errors: extra.errors } : {}),
    ...(extra.errorId ? { errorId: extra.errorId } : {}),
  };
}

/** Body-parser refusals by their type: our words, never the parser's. */
const BODY_PROBLEMS: Record<string, [ProblemName, string]> = {
  'entity.parse.failed': ['malformedBody', REQUEST_MESSAGES.invalidJson],
  'entity.too.large': ['payloadTooLarge', 'The request body is too large'],
  'entity.too.deep': ['malformedBody', REQUEST_MESSAGES.tooDeep],
  'entity.not.json': ['unsupportedMediaType', REQUEST_MESSAGES.bodyNotJson],
  'entity.not.utf8': ['malformedBody', REQUEST_MESSAGES.bodyNotUtf8],
  'charset.unsupported': ['unsupportedMediaType', REQUEST_MESSAGES.charsetUnsupported],
  'encoding.unsupported': ['unsupportedMediaType', REQUEST_MESSAGES.encodingUnsupported],
  'request.aborted': ['malformedBody', REQUEST_MESSAGES.badRequest],
  'stream.encoding.set': ['malformedBody', REQUEST_MESSAGES.badRequest],
};

/** The one mapping of errors to /v1 problems (kinds as the gateway maps them to statuses, codes for the finer types). */
export function problemOf(err: unknown): Problem {
  if (err instanceof AppError) {
    const { errors, errorId } = err.extra;
    switch (err.kind) {
      case ErrorKind.Validation:
        return problem('validation', err.message, { errors });
      case ErrorKind.Unauthorized:
        return problem('unauthorized', err.message);
      case ErrorKind.Forbidden:
        return problem('forbidden', err.message);
      case ErrorKind.NotFound:
        return problem('notFound', err.message);
      case ErrorKind.Conflict:
        if (err.code === IntegrationsErrorCode.IdempotencyConflict) return problem('idempotencyConflict', err.message);
        if (err.code === IntegrationsErrorCode.IdempotencyInProgress)
          return problem('idempotencyInProgress', err.message);
        if (err.code.endsWith('LIMIT_REACHED')) return problem('limitReached', err.message);
        return problem('conflict', err.message);
      case ErrorKind.PayloadTooLarge:
        return problem('payloadTooLarge', err.message);
      case ErrorKind.RateLimited:
        return problem('rateLimited', err.message);
      case ErrorKind.Unavailable:
        return problem('unavailable', err.message);
      case ErrorKind.Internal:
        return problem('internal', err.message, { errorId });
    }
  }
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type in BODY_PROBLEMS) {
    const [name, detail] = BODY_PROBLEMS[type]!;
    return problem(name, detail);
  }
  if (typeof (err as { status?: unknown } | null)?.status === 'number' && (err as { status: number }).status < 500)
    return problem('malformedBody', REQUEST_MESSAGES.badRequest);
  return problem('internal', 'Something went wrong on our side', { errorId: AppError.internal().extra.errorId });
}

export function sendProblem(res: Response, p: Problem): void {
  if (res.headersSent) return;
  res.status(p.status).setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify(p));
}

export const isInternal = (p: Problem) => p.status >= 500;
export { CommonErrorCode };
