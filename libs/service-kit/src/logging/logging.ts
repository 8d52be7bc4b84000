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
const SENSITIVE_QUERY_KEY = /^(token|access_token|id_token|refresh_token|jwt|__session|__clerk_db_jwt|code|password|secret|api_?key|key|signature|auth|authorization)$/i;
const CENSOR = '[redacted]';

/** URLs whose path or search carry a phone number: the opt-out calls (`/api/opt-outs/{userId}/{phone}`, `?q=`). */
const PHONE_IN_URL = /^(\/api\/opt-outs\/[^/?]+\/)(?!settings\b|export\b|check\b)[^/?]+/;

/** An opt-out call's URL with its phone numbers (path, `?q=`) replaced; any other URL as it is. */
function redactPhones(url: string): string {
  if (!url.startsWith('/api/opt-outs/')) return url;
  const [path = '', query] = url.split('?', 2);
  const safePath = path.replace(PHONE_IN_URL, `$1${CENSOR}`);
  return query === undefined ? safePath : `${safePath}?${query.replace(/(^|&)q=[^&]*/g, `$1q=${CENSOR}`)}`;
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
      let key = rawKey;
      try {
        key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      } catch {
        // undecodable: judge the raw key
      }
      return eq >= 0 && SENSITIVE_QUERY_KEY.test(key) ? `${rawKey}=${CENSOR}` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function redactQuery(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, SENSITIVE_QUERY_KEY.test(k) ? CENSOR : v]));
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
export function loggerParams(service: string, level: string, http: boolean, slowMs = 1000, quietRoutes: QuietRoute[] = []): Params {
  return {
    // Routes hit by pollers skip pino-http altogether: it serialises and redacts every request into a
    // child logger even when nothing is written. Their errors and slow answers are logged by the service.
    ...(quietRoutes.length > 0 ? { exclude: quietRoutes.map(({ path }) => ({ path, method: RequestMethod.GET })) } : {}),
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
