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
export function securityHeaders(options: { clerkOrigin?: string }): RequestHandler[] {
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
  // Swagger UI (/api/docs) sets its theme with inline styles.
  const docs = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { ...common, scriptSrc: ["'self'"], styleSrc: ["'self'", "'unsafe-inline'"], imgSrc: ["'self'", 'data:'] },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    crossOriginEmbedderPolicy: false,
  });
  const pick = (req: Request, res: Response, next: NextFunction) => (req.path.startsWith('/api/docs') ? docs : app)(req, res, next);
  const noStore = (req: Request, res: Response, next: NextFunction) => {
    if (API_PATHS.test(req.path)) res.setHeader('Cache-Control', 'no-store');
    next();
  };
  return [pick, noStore];
}
