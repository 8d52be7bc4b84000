import type { IncomingMessage, ServerResponse } from 'node:http';
import { json } from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthedRequest } from './auth.types.js';
import type { AuthFailures } from './auth-failures.js';
import { BodyNotJsonError, declaresJson } from '../http/json-body.js';
import { bearerToken, type TokenVerifier } from './token-verifier.js';

/** The only routes that read a body from a caller without a token. */
const PRE_AUTH_BODY_PATHS = new Set(['/auth/dev/sign-in']);
/** Signed-in routes that stream their body themselves (a multipart upload): it is never parsed here. */
const STREAMED_BODY_PATHS = new Set(['/api/media']);

/**
 * Authenticates before any body is read: a caller with a valid token may send up to BODY_LIMIT. A
 * caller without one has its body parsed only on the sign-in route, and only up to
 * PRE_AUTH_BODY_LIMIT; anywhere else it is not parsed at all and the AuthGuard answers 401 (so an
 * anonymous 5 MB body costs no parsing, and broken JSON without a token is a 401, not a 400).
 */
export function authenticateThenParse(options: {
  verifier: TokenVerifier;
  failures: AuthFailures;
  bodyLimit: string;
  /** Signed-in routes (exact paths) allowed a bigger body than BODY_LIMIT. */
  routeBodyLimits?: Record<string, string>;
  preAuthBodyLimit: string;
  /** Checks the raw bytes before JSON.parse (the depth bound); throws to refuse the body. */
  verify?: (req: IncomingMessage, res: ServerResponse, body: Buffer, encoding: string) => void;
}): RequestHandler {
  // Every body of the API is JSON: one of another type is refused in so many words, rather than left
  // unread and answered as if it were empty ("Please enter a message first" to a message sent as text/plain).
  const jsonOnly =
    (parse: RequestHandler): RequestHandler =>
    (req, res, next) =>
      declaresJson(req) || req.headers['content-length'] === '0' ? parse(req, res, next) : next(new BodyNotJsonError());
  const parseDefault = jsonOnly(json({ limit: options.bodyLimit, verify: options.verify }));
  const parseByRoute = new Map(
    Object.entries(options.routeBodyLimits ?? {}).map(([path, limit]) => [
      path,
      jsonOnly(json({ limit, verify: options.verify })),
    ]),
  );
  // A request without a body (every GET poll) has nothing to parse: the parser would only find that out.
  const parseSignedIn: RequestHandler = (req, res, next) =>
    hasBody(req) && !STREAMED_BODY_PATHS.has(req.path)
      ? (parseByRoute.get(req.path) ?? parseDefault)(req, res, next)
      : next();
  const parseAnonymousJson = jsonOnly(json({ limit: options.preAuthBodyLimit, verify: options.verify }));
  const parseAnonymous: RequestHandler = (req, res, next) =>
    hasBody(req) ? parseAnonymousJson(req, res, next) : next();
  return (req: Request, res: Response, next: NextFunction) => {
    const authed = req as AuthedRequest;
    const anonymous = () => (PRE_AUTH_BODY_PATHS.has(req.path) ? parseAnonymous(req, res, next) : next());
    const token = bearerToken(req.headers.authorization);
    if (!token) return anonymous();
    // A token verified before goes on in this turn: a poller's request needs no promise here.
    const known = options.verifier.cached(token);
    if (known) {
      authed.user = known;
      return parseSignedIn(req, res, next);
    }
    // A valid token always gets through, so failed sign-ins from a shared address (an office NAT, a
    // proxy) cannot lock its signed-in users out; only failures from a blocked address are refused.
    options.verifier.verify(token).then(
      (user) => {
        authed.user = user;
        parseSignedIn(req, res, next);
      },
      (err: unknown) => {
        const address = req.ip ?? 'unknown';
        const blocked = options.failures.blocked(address);
        if (blocked) return next(blocked);
        options.failures.record(address);
        authed.authError = err;
        anonymous();
      },
    );
  };
}

/** Whether the request carries a body (body-parser's own test: a length or a transfer encoding). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
}
