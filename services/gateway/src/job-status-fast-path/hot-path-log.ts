import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { redactUrl } from '@bns/service-kit';

/**
 * The read routes a page polls or opens often (job status and logs; the dashboard): left out
 * of pino-http (see main.ts), whose per-request line and redaction cost as much as the rest of such an
 * answer; logged here only when they fail or are slow.
 */
export const HOT_ROUTES = [
  { path: 'job-status/:jobId' },
  { path: 'job-logs/:jobId' },
  { path: 'api/dashboard/:userId' },
];
const HOT_PATHS = /^\/(job-status|job-logs|api\/dashboard)\/[^/]+$/;

/** 5xx answers at error, answers slower than `slowMs` at info; nothing for the usual fast poll. */
export function hotPathLog(logger: LoggerService, slowMs: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'GET' || !HOT_PATHS.test(req.path)) return next();
    const started = performance.now();
    res.once('finish', () => {
      const ms = performance.now() - started;
      if (res.statusCode < 500 && ms < slowMs) return;
      const entry = {
        req: { method: req.method, url: redactUrl(req.originalUrl) },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(ms),
      };
      if (res.statusCode >= 500) logger.error(entry, 'request errored');
      else logger.log(entry, 'slow request');
    });
    next();
  };
}
