/**
 * RFC 9457 problem types of the /v1 API: each `type` is stable (clients branch on it), `title` is
 * the same for every occurrence, `detail` says what went wrong this time. The type URIs are relative
 * to the API's origin and answered by `GET /v1/problems/{slug}`.
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const problem = (slug: string, status: number, title: string) =>
  ({ type: `/v1/problems/${slug}`, slug, status, title }) as const;

export const PROBLEMS = {
  validation: problem('validation', 400, 'The request is not valid'),
  malformedBody: problem('malformed-body', 400, 'The request body could not be read'),
  unauthorized: problem('unauthorized', 401, 'A valid API key is required'),
  insufficientScope: problem('insufficient-scope', 403, 'The API key lacks a scope this call needs'),
  forbidden: problem('forbidden', 403, 'Not allowed'),
  notFound: problem('not-found', 404, 'Not found'),
  methodNotAllowed: problem('method-not-allowed', 405, 'Method not allowed'),
  conflict: problem('conflict', 409, 'The request conflicts with the current state'),
  idempotencyConflict: problem('idempotency-key-reused', 409, 'Idempotency-Key reused with another request'),
  idempotencyInProgress: problem(
    'idempotency-key-in-progress',
    409,
    'A request with this Idempotency-Key is in progress',
  ),
  limitReached: problem('limit-reached', 409, 'A limit of the account was reached'),
  payloadTooLarge: problem('payload-too-large', 413, 'The request body is too large'),
  unsupportedMediaType: problem('unsupported-media-type', 415, 'The request body must be JSON'),
  rateLimited: problem('rate-limited', 429, 'Too many requests'),
  unavailable: problem('unavailable', 503, 'The service is unavailable: retry later'),
  internal: problem('internal', 500, 'Something went wrong on our side'),
} as const;
export type ProblemName = keyof typeof PROBLEMS;

/** The body of every /v1 error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  /** Field (dotted path) → what is wrong with it (validation problems). */
  errors?: Record<string, string>;
  /** The id under which an internal error was logged. */
  errorId?: string;
}
