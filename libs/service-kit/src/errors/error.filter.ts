import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { throwError, type Observable } from 'rxjs';
import { CommonErrorCode, ErrorKind, MESSAGES, REQUEST_MESSAGES, type ErrorPayload } from '@bns/contracts';
import { AppError, httpStatusOf } from './app-error.js';

const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: ErrorKind.Validation,
  401: ErrorKind.Unauthorized,
  403: ErrorKind.Forbidden,
  404: ErrorKind.NotFound,
  409: ErrorKind.Conflict,
  413: ErrorKind.PayloadTooLarge,
  429: ErrorKind.RateLimited,
  503: ErrorKind.Unavailable,
};

/** A field of a body-parser failure (http-errors), on the error itself or on the one Nest wrapped. */
function parserField(exception: unknown, field: 'type' | 'body'): string | undefined {
  for (const candidate of [exception, (exception as { cause?: unknown } | null)?.cause]) {
    const value = (candidate as Record<string, unknown> | null | undefined)?.[field];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/**
 * Valid JSON that is no object or array (`null`, `123`, `"text"`): body-parser's strict mode refuses
 * it as a parse failure too, with the raw text as the error's `body`; the caller is told what is wrong.
 */
function isJsonScalarBody(exception: unknown): boolean {
  const body = parserField(exception, 'body');
  if (body === undefined) return false;
  try {
    const value: unknown = JSON.parse(body);
    return value === null || typeof value !== 'object';
  } catch {
    return false;
  }
}

/** Body refusals by their type: the gateway's own checks and body-parser's charset and encoding ones. */
const BODY_MESSAGES: Record<string, string> = {
  'entity.too.deep': REQUEST_MESSAGES.tooDeep,
  'entity.not.json': REQUEST_MESSAGES.bodyNotJson,
  'entity.not.utf8': REQUEST_MESSAGES.bodyNotUtf8,
  'charset.unsupported': REQUEST_MESSAGES.charsetUnsupported,
  'encoding.unsupported': REQUEST_MESSAGES.encodingUnsupported,
};

/** What a 4xx says: our words, never a parser's (no "Unexpected token", no "incorrect header check"). */
function httpLikeMessage(status: number, exception: unknown): string {
  if (status === 413) return MESSAGES.payloadTooLarge;
  if (status === 404) return MESSAGES.notFound;
  const type = parserField(exception, 'type');
  if (type === 'entity.parse.failed')
    return isJsonScalarBody(exception) ? REQUEST_MESSAGES.bodyNotObject : REQUEST_MESSAGES.invalidJson;
  if (type !== undefined && type in BODY_MESSAGES) return BODY_MESSAGES[type]!;
  // Mapped from a middleware (body-parser, zlib, Express): its text is the library's, not ours.
  if (type !== undefined || (exception as { cause?: unknown } | null)?.cause !== undefined)
    return REQUEST_MESSAGES.badRequest;
  return exception instanceof HttpException ? exception.message : REQUEST_MESSAGES.badRequest;
}

/** A body-parser failure (bad JSON, too deep, too large) or a Nest HttpException, as a typed error. */
function fromHttpLike(exception: unknown): AppError | undefined {
  const status =
    exception instanceof HttpException
      ? exception.getStatus()
      : (exception as { status?: unknown; type?: unknown } | null)?.type !== undefined
        ? (exception as { status?: number }).status
        : undefined;
  if (typeof status !== 'number' || status >= 500) return undefined;
  const kind = KIND_BY_STATUS[status] ?? ErrorKind.Validation;
  const code =
    status === 413
      ? CommonErrorCode.PayloadTooLarge
      : status === 404
        ? CommonErrorCode.NotFound
        : CommonErrorCode.BadRequest;
  return new AppError(kind, code, httpLikeMessage(status, exception));
}

/**
 * The one place errors leave a service. Over NATS an error becomes an ErrorPayload; over HTTP it
 * becomes `{success: false, error, code, errors?, errorId?}` with the status of its kind. Anything
 * unexpected is logged under a fresh error id and only that id is shown.
 */
@Catch()
export class AppErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('AppErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): Observable<ErrorPayload> | void {
    let error = exception instanceof AppError ? exception : fromHttpLike(exception);
    if (!error) {
      error = AppError.internal();
      this.logger.error({ err: exception, errorId: error.extra.errorId }, 'unhandled error');
    } else if (error.kind === ErrorKind.Internal) {
      this.logger.error({ errorId: error.extra.errorId, code: error.code }, 'internal error reported by a service');
    }

    if (host.getType() === 'rpc') return throwError(() => error.toPayload());
    if (host.getType() !== 'http') return;

    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    const retryAfter = error.extra.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
    const { errors, errorId } = error.extra;
    res.status(httpStatusOf(error.kind)).json({
      success: false,
      error: error.message,
      code: error.code,
      ...(errors ? { errors } : {}),
      ...(errorId ? { errorId } : {}),
    });
  }
}
