import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { stdSerializers } from 'pino';

/** Never logged: credentials, tokens, QR payloads (a QR is a login secret while it is live). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.token',
  '*.password',
  '*.secret',
  '*.authorization',
  '*.qr',
  'qr',
  'token',
  // SQL errors (TypeORM QueryFailedError) carry the query's bound values: phone numbers, message text.
  '*.parameters',
  // Phone numbers a request carries outside its body (the opt-out calls): personal data.
  'req.params.phone',
  'req.query.q',
];

/** Query-string keys whose values are secrets (a token in `?token=` must not land in the log). */
const SENSITIVE_QUERY_KEY =
  /^(token|access_token|id_token|refresh_token|jwt|__session|__clerk_db_jwt|code|password|secret|api_?key|key|signature|auth|authorization)$/i;
const CENSOR = '[redacted]';

/** URLs whose path or search carry a phone number: the opt-out calls (`/api/opt-outs/{userId}/{phone}`, `?q=`); routing ignores case. */
const PHONE_IN_URL = /^(\/api\/opt-outs\/[^/?]+\/)(?!settings\b|export\b|check\b)[^/?]+/i;
/** A path segment that may be a phone number, once decoded: digits (6 or more) with the usual separators. */
const PHONE_LIKE = /^\+?[\d\s().-]*\d{3}[\d\s().-]*$/;
/** Route parameters logged as they are: ids. Any other (`phone`, a catch-all's `splat` holding the whole path) is replaced. */
const LOGGED_PARAMS = new Set(['userId', 'jobId', 'templateId']);

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A segment that is a number a person may have: 6 or more digits, separators aside. */
function phoneLike(segment: string): boolean {
  const text = decoded(segment);
  return PHONE_LIKE.test(text) && text.replace(/\D/g, '').length >= 6;
}

/**
 * A URL with its phone numbers replaced: the opt-out calls' number (path, `?q=`), and on any path a
 * segment that looks like one (a mistyped route still logs its path on a 5xx or a slow answer).
 */
function redactPhones(url: string): string {
  const [path = '', query] = url.split('?', 2);
  const safePath = path
    .replace(PHONE_IN_URL, `$1${CENSOR}`)
    .split('/')
    .map((segment) => (segment !== CENSOR && phoneLike(segment) ? CENSOR : segment))
    .join('/');
  return query === undefined ? safePath : `${safePath}?${query.replace(/(^|&)(q)=[^&]*/gi, `$1$2=${CENSOR}`)}`;
}

/** A request URL fit for logs and trace names: the values of sensitive query keys and phone numbers replaced. */
export function redactUrl(raw: string): string {
  const url = redactPhones(raw);
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawKey = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SENSITIVE_QUERY_KEY.test(decoded(rawKey)) ? `${rawKey}=${CENSOR}` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/** Route parameters fit for logs: ids kept, anything else replaced. */
function redactParams(params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params;
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, LOGGED_PARAMS.has(k) ? v : CENSOR]));
}

function redactQuery(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  return Object.fromEntries(
    Object.entries(query).map(([k, v]) => [k, SENSITIVE_QUERY_KEY.test(k) || k.toLowerCase() === 'q' ? CENSOR : v]),
  );
}

/**
 * Errors as pino writes them, minus what carries user data: a SQL error's bound parameters (also
 * under `driverError`) and Postgres's `detail` ("Key (phone)=(852…) already exists").
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out = stdSerializers.err(err) as unknown as Record<string, unknown>;
  delete out.parameters;
  if (typeof out.detail === 'string') out.detail = CENSOR;
  const driver = out.driverError;
  if (typeof driver === 'object' && driver !== null) {
    const { parameters: _p, detail, ...rest } = driver as Record<string, unknown>;
    out.driverError = { ...rest, ...(detail === undefined ? {} : { detail: CENSOR }) };
  }
  return out;
}

/** A GET route (Nest path syntax, e.g. `job-status/:jobId`) left out of per-request logging. */
export interface QuietRoute {
  path: string;
}

type TimedRequest = IncomingMessage & { id?: unknown; receivedAt?: number };
let nextRequestId = 0;

/**
 * HTTP access logs: errors (5xx) always, slow requests (≥ slowMs) at info, everything else at debug.
 * A per-request info line on the hot paths (pollers) cost the gateway ~10% of its CPU.
 */
export function loggerParams(
  service: string,
  level: string,
  http: boolean,
  slowMs = 1000,
  quietRoutes: QuietRoute[] = [],
): Params {
  return {
    // Routes hit by pollers skip pino-http altogether: it serialises and redacts every request into a
    // child logger even when nothing is written. Their errors and slow answers are logged by the service.
    ...(quietRoutes.length > 0
      ? { exclude: quietRoutes.map(({ path }) => ({ path, method: RequestMethod.GET })) }
      : {}),
    pinoHttp: {
      level,
      base: { service },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      serializers: {
        err: serializeError,
        req: (req: Record<string, unknown>) => ({
          ...req,
          ...(typeof req.url === 'string' ? { url: redactUrl(req.url) } : {}),
          ...(req.query !== undefined ? { query: redactQuery(req.query) } : {}),
          ...(req.params !== undefined ? { params: redactParams(req.params) } : {}),
        }),
      },
      genReqId: (req: TimedRequest) => {
        req.receivedAt = performance.now();
        return req.id ?? (nextRequestId = (nextRequestId + 1) & 0x7fffffff);
      },
      customLogLevel: (req: TimedRequest, res: ServerResponse, err?: Error) => {
        if (err || res.statusCode >= 500) return 'error';
        const elapsed = req.receivedAt === undefined ? 0 : performance.now() - req.receivedAt;
        return elapsed >= slowMs ? 'info' : 'debug';
      },
      autoLogging: http ? { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' } : false,
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
    },
  };
}
