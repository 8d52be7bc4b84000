import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { HOT_ROUTES, hotPathLog } from '../hot-path-log.js';

/** A logger that keeps what it was given. */
function recorder() {
  const lines: Array<{ level: string; entry: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (entry: Record<string, unknown>, message: string) =>
    void lines.push({ level, entry, message });
  const logger = { log: at('info'), error: at('error'), warn: at('warn') } as unknown as LoggerService;
  return { lines, logger };
}

/** Runs one request through the middleware; `finish` after `ms` with `status`. */
async function run(
  mw: ReturnType<typeof hotPathLog>,
  method: string,
  url: string,
  status: number,
  ms = 0,
): Promise<boolean> {
  const res = Object.assign(new EventEmitter(), { statusCode: status }) as unknown as Response;
  const path = url.split('?')[0]!;
  const req = { method, path, originalUrl: url } as Request;
  let nexted = false;
  mw(req, res, (() => (nexted = true)) as NextFunction);
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
  (res as unknown as EventEmitter).emit('finish');
  return nexted;
}

describe('hot-path log (the read routes left out of the per-request log)', () => {
  it('names job status, job logs and the dashboard read as the quiet routes', () => {
    expect(HOT_ROUTES.map((r) => r.path)).toEqual(['job-status/:jobId', 'job-logs/:jobId', 'api/dashboard/:userId']);
  });

  it('logs a quiet route only when it failed (5xx, at error) or was slow (at info), never a usual fast answer', async () => {
    const { lines, logger } = recorder();
    const mw = hotPathLog(logger, 20);
    for (const url of [
      '/job-status/abc',
      '/job-logs/abc?since=1',
      '/api/dashboard/user_1',
      '/api/dashboard/user_1?limit=100',
    ]) {
      expect(await run(mw, 'GET', url, 200)).toBe(true);
      expect(await run(mw, 'GET', url, 404)).toBe(true);
    }
    expect(lines).toEqual([]);
    await run(mw, 'GET', '/api/dashboard/user_1?limit=5', 503);
    await run(mw, 'GET', '/job-status/abc', 200, 40);
    expect(lines.map((l) => [l.level, l.message, (l.entry.res as { statusCode: number }).statusCode])).toEqual([
      ['error', 'request errored', 503],
      ['info', 'slow request', 200],
    ]);
  });

  it('leaves every other request to the per-request log (writes, other paths, deeper paths)', async () => {
    const { lines, logger } = recorder();
    const mw = hotPathLog(logger, 0);
    for (const [method, url] of [
      ['POST', '/api/dashboard/user_1'],
      ['GET', '/api/dashboard/user_1/extra'],
      ['GET', '/api/templates/user_1'],
      ['GET', '/dashboard/user_1'],
    ]) {
      expect(await run(mw, method!, url!, 500)).toBe(true);
    }
    // Not watched: nothing was logged here (pino-http logs them).
    expect(lines).toEqual([]);
  });
});
