import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { API_PATHS } from '../web/web-app.js';

/**
 * Headers for every answer: a Content-Security-Policy the built web app runs under (its scripts and
 * styles are files of its own origin, no inline script; QR codes are data: images; the socket is
 * same-origin), nosniff, no framing, no referrer to other sites, and no X-Powered-By. In Clerk mode the
 * Clerk Frontend API origin may load its script, frames and images (and inject styles).
 *
 * API answers are `Cache-Control: no-store` (authenticated data stays out of every cache) unless the
 * route says otherwise (job-status revalidates with an ETag).
 */
export function securityHeaderSets(options: { clerkOrigin?: string }): SecurityHeaderSets {
  const clerk = options.clerkOrigin ? [options.clerkOrigin] : [];
  const common = {
    defaultSrc: ["'self'"],
    baseUri: ["'self'"],
    objectSrc: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'", ...clerk],
  };
  const app = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        ...common,
        scriptSrc: ["'self'", ...clerk],
        styleSrc: ["'self'", ...(clerk.length > 0 ? ["'unsafe-inline'"] : [])],
        imgSrc: ["'self'", 'data:', 'blob:', ...clerk, ...(clerk.length > 0 ? ['https://img.clerk.com'] : [])],
        workerSrc: ["'self'", 'blob:'],
        frameSrc: clerk.length > 0 ? clerk : ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    crossOriginEmbedderPolicy: false,
  });
  const docs = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        ...common,
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    crossOriginEmbedderPolicy: false,
  });
  return { app: headersOf(app), docs: headersOf(docs) };
}

/** The headers of every answer: the app's, or the API docs' (whose CSP allows inline styles). */
export interface SecurityHeaderSets {
  readonly app: readonly [string, string][];
  readonly docs: readonly [string, string][];
}

/** Sets the headers (securityHeaderSets) on every answer, and no-store on the API's. */
export function securityHeaders(sets: SecurityHeaderSets): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    // Swagger UI (/api/docs) sets its theme with inline styles.
    for (const [name, value] of path.startsWith('/api/docs') ? sets.docs : sets.app) res.setHeader(name, value);
    if (API_PATHS.test(path)) res.setHeader('Cache-Control', 'no-store');
    next();
  };
}

/**
 * The headers a helmet middleware sets, found once by running it against a recording response. Our
 * policies are fixed at start (no per-request nonce), so the headers are the same for every request;
 * setting them from a list skips helmet's chain of a dozen middlewares on every poll.
 */
function headersOf(middleware: RequestHandler): [string, string][] {
  const headers = new Map<string, string>();
  let done = false;
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
  };
  void middleware({} as Request, recorder as unknown as Response, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously: its headers cannot be computed once');
  return [...headers];
}
