/**
 * Transport-neutral error kinds. Services reply with one of these; the gateway maps each kind to an
 * HTTP status in exactly one place (service-kit `httpStatusOf`).
 */
export enum ErrorKind {
  Validation = 'validation',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  Conflict = 'conflict',
  RateLimited = 'rate_limited',
  PayloadTooLarge = 'payload_too_large',
  Unavailable = 'unavailable',
  Internal = 'internal',
}

/** What crosses NATS when a request fails. `code` is the owning module's own code. */
export interface ErrorPayload {
  kind: ErrorKind;
  code: string;
  message: string;
  /** Field → message, for form-style validation errors. */
  errors?: Record<string, string>;
  details?: Record<string, unknown>;
  /** Set on internal errors: the id under which the cause was logged. */
  errorId?: string;
}

export function isErrorPayload(value: unknown): value is ErrorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.kind === 'string' && typeof v.code === 'string' && typeof v.message === 'string';
}

/** Codes shared by every module (auth, limits, plumbing). Module-specific codes live with the module. */
export enum CommonErrorCode {
  BadRequest = 'BAD_REQUEST',
  /** A NATS request its owning service refused before handling it: a field missing, of the wrong type or out of bounds. */
  InvalidRequest = 'INVALID_REQUEST',
  Unauthorized = 'UNAUTHORIZED',
  Forbidden = 'FORBIDDEN',
  NotFound = 'NOT_FOUND',
  RateLimited = 'RATE_LIMITED',
  PayloadTooLarge = 'PAYLOAD_TOO_LARGE',
  /**
   * The handler's answer was too large for one NATS message (max_payload): the service answers this
   * at once instead of leaving the caller to its timeout. Kind PayloadTooLarge.
   */
  ReplyTooLarge = 'REPLY_TOO_LARGE',
  /** A request that reached its service after its caller had given up (LIMITS.rpcDeadlineGraceMs): not acted on. */
  RequestExpired = 'REQUEST_EXPIRED',
  ServiceUnavailable = 'SERVICE_UNAVAILABLE',
  /**
   * The caller's NATS connection dropped while the request was in flight (or before it was sent). The
   * request may or may not have been handled: retry it once the connection is back (RpcClient
   * `whenConnected()`), and do not count it as a failure of the work it carried.
   */
  NatsDisconnected = 'NATS_DISCONNECTED',
  /** The gateway is over its in-flight or event-loop-lag bound: retry after `Retry-After`. */
  Overloaded = 'OVERLOADED',
  Internal = 'INTERNAL',
}
