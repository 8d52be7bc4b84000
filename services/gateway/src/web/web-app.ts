import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';

/** Paths that belong to the API; everything else a browser asks for is the single-page app. */
export const API_PATHS =
  /^\/(api|v1|auth|dev|socket\.io|healthz|readyz|start-bulk-messages|job-status|job-logs|cancel-job)(\/|$)/;

const DEFAULT_DIST = fileURLToPath(new URL('../../../../web/dist', import.meta.url));

/**
 * Serves the built web app (when built) with an index.html fallback for client-side routes. API paths
 * never reach the file system: a poll of /job-status must not cost an fs.stat.
 */
export function serveWebApp(app: NestExpressApplication, dist: string | undefined): string | undefined {
  const root = dist ?? DEFAULT_DIST;
  const index = join(root, 'index.html');
  if (!existsSync(index)) return undefined;
  const files = express.static(root, {
    index: false,
    maxAge: '1h',
    setHeaders: (res, path) => {
      if (path.endsWith('index.html')) res.setHeader('Cache-Control', 'no-cache');
    },
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (API_PATHS.test(req.path)) return next();
    files(req, res, () => {
      if (req.method !== 'GET' || !req.headers.accept?.includes('text/html')) return next();
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(index);
    });
  });
  return root;
}
