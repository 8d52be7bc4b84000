import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { Server } from 'node:http';
import { tracingEnabled } from '@bns/service-kit';
import { TOKEN_VERIFIER } from '../auth/auth.guard.js';
import type { TokenVerifier } from '../auth/token-verifier.js';
import type { GatewayEnv } from '../config/env.js';
import type { LoadShedder } from '../http/load-shedding.js';
import { SharedRateLimiter } from '../rate-limit/shared-rate-limiter.js';
import { FrontDoor } from './front-door.js';
import { hotPathLog } from './hot-path-log.js';
import { JobIdCheck } from './job-id-check.js';
import { JobStatusCache } from './job-status-cache.js';

export interface FastPathOptions {
  env: Pick<GatewayEnv, 'CORS_ORIGINS' | 'SLOW_REQUEST_MS'>;
  /** The security headers every API answer carries (securityHeaderSets(...).app). */
  headers: readonly [string, string][];
  /** Told which polls the front door could answer but for the rate limit's lease (they meet its hard bound only). */
  shedder: Pick<LoadShedder, 'answersFromMemory'>;
}

/**
 * The job-status fast path's two hooks on the HTTP server, called once from main.ts where the hot
 * routes' log belongs in the Express chain (after load shedding and tracing, before the routes):
 * - FrontDoor, before Express: revalidations this replica can answer from memory, and ids that name
 *   no job of the caller, skip Express altogether. With CORS_ORIGINS set every answer carries CORS
 *   headers, which are Express's to set, so there is no front door and the routes answer every poll
 *   (the parity test starts a gateway that way to compare).
 * - the hot routes' log (hotPathLog): their failures and slow answers only, since pino-http leaves
 *   them out (HOT_ROUTES, passed to runService as quietRoutes).
 * The front door wraps the server's request listeners, so where in main.ts it is installed does not
 * matter as long as it is before the server listens.
 */
export function installJobStatusFastPath(
  app: NestExpressApplication,
  { env, headers, shedder }: FastPathOptions,
): void {
  if (env.CORS_ORIGINS.length === 0) {
    const door = new FrontDoor({
      verifier: app.get<TokenVerifier>(TOKEN_VERIFIER),
      limiter: app.get(SharedRateLimiter),
      statusCache: app.get(JobStatusCache),
      ids: app.get(JobIdCheck),
      headers,
      tracing: tracingEnabled(),
    });
    door.install(app.getHttpServer() as Server);
    shedder.answersFromMemory((req) => door.answersFromMemory(req));
  }
  app.use(hotPathLog(app.get(Logger), env.SLOW_REQUEST_MS));
}
