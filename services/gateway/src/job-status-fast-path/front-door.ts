import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { context } from '@opentelemetry/api';
import { ifNoneMatchVersions, JOB_STATUS_CACHE_CONTROL, jobStatusEtag } from '@bns/contracts';
import { recordHttpRequest } from '@bns/service-kit';
import { hasBody } from '../auth/authenticate.middleware.js';
import { bearerToken, type TokenVerifier } from '../auth/token-verifier.js';
import { jobNotFound, type JobIdCheck } from './job-id-check.js';
import type { JobStatusCache, KnownAnswer } from './job-status-cache.js';
import { countJobIdRefused, countJobStatusAnswer, countRevalidation } from '../metrics/gateway.metrics.js';
import { sendWholeAnswer } from './job-status.service.js';
import type { SharedRateLimiter } from '../rate-limit/shared-rate-limiter.js';
import { userLimitKey } from '../rate-limit/rate-limit.guard.js';
import { traceHttpRequest } from '../telemetry/http-trace.middleware.js';

/** The route template the job-status route is counted under in `bns_http_requests_total`. */
const JOB_STATUS_ROUTE = '/job-status/:jobId';
/** `/job-status/<id>` exactly: no query, no further segment, nothing percent-encoded (Express would decode it). */
const JOB_STATUS_PATH = /^\/job-status\/([^/?%#]+)$/;

/** The jobs service's "not found" (`jobNotFound`), as AppErrorFilter writes it. */
const NOT_FOUND_BODY = (() => {
  const { message, code } = jobNotFound();
  return Buffer.from(JSON.stringify({ success: false, error: message, code }));
})();

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** What the front door answers a request with, from memory. */
type Found =
  | { kind: 'unknown'; userId: string }
  | { kind: 'unchanged'; userId: string; version: string }
  | { kind: 'whole'; userId: string; answer: KnownAnswer };

export interface FrontDoorOptions {
  verifier: Pick<TokenVerifier, 'cached'>;
  limiter: Pick<SharedRateLimiter, 'spendLeased'>;
  statusCache: Pick<JobStatusCache, 'version' | 'answer'>;
  ids: Pick<JobIdCheck, 'mayExist'>;
  /** The security headers every API answer carries (securityHeaderSets(...).app). */
  headers: readonly [string, string][];
  /** Whether requests get a server span (OpenTelemetry exporter configured). */
  tracing: boolean;
}

/**
 * The gateway's first look at an HTTP request, before Express, so a poll costs as little as it can.
 * A poller revalidating a job this replica knows to be unchanged (`GET /job-status/{jobId}` with an
 * If-None-Match naming the version JobStatusCache holds) is answered 304 here, with what the route
 * would have checked and answered:
 * - a bearer token verified before and not expired (the claims cache: the route's AuthGuard);
 * - one request of the user's rate-limit budget that this replica already leased (the RateLimitGuard);
 *   checked last, so a request that goes on to the routes is never charged twice;
 * - the version is the user's own job's (cache keys hold the user: another user's poll never matches);
 * - the same status, security headers, Cache-Control and ETag, the same metrics
 *   (`bns_http_requests_total` under the route's template, revalidations answered by memory), and a
 *   span when tracing is on.
 *
 * A poll without a validator, or naming an older version, of a job whose whole answer the replica
 * kept for the current version (JOB_STATUS_CACHE_BYTES) gets that 200 here, with the same checks.
 *
 * A poll of a job id that names no job of the user (JobIdCheck: made up, mistyped, another user's) is
 * answered here too: the route's 404, with the same checks before it, the same headers and body.
 *
 * Anything else (no or unknown token, no lease left, a body, an encoded or odd path, a version the
 * replica does not hold, a CORS deployment, whose headers are the routes' to set) goes on to Express,
 * unchanged. Express and Nest routing cost as much as the rest of such an answer: doing without them
 * makes a revalidation from memory cost about half the gateway CPU (docs/benchmarks.md, gateway-pollers).
 * Load shedding stays in Express: a revalidation answered here costs less than the refusal would. A
 * poll it could answer but for the rate limit goes there too, and meets only the hard bound of
 * requests in progress, not the limit that backends' queues set (`answersFromMemory`).
 */
export class FrontDoor {
  constructor(private readonly options: FrontDoorOptions) {}

  /** Puts the front door before the server's request listeners (Express's), which get what it does not answer. */
  install(server: Server): void {
    const listeners = server.listeners('request') as Listener[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.answer(req, res)) return;
      for (const listener of listeners) listener.call(server, req, res);
    });
  }

  /** True when the request was answered here. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    const found = this.find(req);
    if (!found || !this.options.limiter.spendLeased(userLimitKey(found.userId))) return false;
    switch (found.kind) {
      case 'unknown':
        countJobIdRefused();
        this.reply(req, res, 404, () => {
          res.setHeader('Content-Type', 'application/json; charset=utf-8');
          res.setHeader('Content-Length', NOT_FOUND_BODY.length);
          res.end(NOT_FOUND_BODY);
        });
        return true;
      case 'unchanged':
        this.reply(req, res, 304, () => {
          res.setHeader('ETag', jobStatusEtag(found.version));
          res.end();
        });
        countRevalidation('memory');
        return true;
      case 'whole':
        this.reply(req, res, 200, () => {
          sendWholeAnswer(res, found.answer.version, found.answer.body);
        });
        countJobStatusAnswer('memory');
        return true;
    }
  }

  /**
   * Whether this replica can answer the request from memory, its rate limit aside: such a request
   * needs no service behind the gateway (only, when this replica's lease of the user's budget is
   * spent, the rate limit's store), so load shedding holds it to the hard bound only.
   */
  answersFromMemory(req: IncomingMessage): boolean {
    return this.find(req) !== undefined;
  }

  /** What the door would answer, before the rate limit: nothing when the request is the routes'. */
  private find(req: IncomingMessage): Found | undefined {
    if (req.method !== 'GET') return undefined;
    const path = JOB_STATUS_PATH.exec(req.url ?? '');
    if (!path || hasBody(req)) return undefined;
    const token = bearerToken(req.headers.authorization);
    const user = token === undefined ? undefined : this.options.verifier.cached(token);
    if (!user) return undefined;
    const { userId } = user;
    const jobId = path[1]!;
    if (!this.options.ids.mayExist(userId, jobId)) return { kind: 'unknown', userId };
    const ifNoneMatch = req.headers['if-none-match'];
    const versions = ifNoneMatch === undefined ? undefined : ifNoneMatchVersions(ifNoneMatch);
    // A malformed validator goes to the route, which says nothing of it either way.
    if (ifNoneMatch !== undefined && !versions) return undefined;
    const version = this.options.statusCache.version(userId, jobId);
    if (version === undefined) return undefined;
    if (versions?.some((v) => v === '*' || v === version)) return { kind: 'unchanged', userId, version };
    // No validator, or an older version's: the whole answer, when this replica kept it.
    const answer = this.options.statusCache.answer(userId, jobId);
    return answer && { kind: 'whole', userId, answer };
  }

  /** The API's security headers, the status, the route's Cache-Control, what `finish` adds; a span when tracing is on; counted as the route. */
  private reply(req: IncomingMessage, res: ServerResponse, status: 200 | 304 | 404, finish: () => void): void {
    const started = performance.now();
    const send = () => {
      for (const [name, value] of this.options.headers) res.setHeader(name, value);
      res.statusCode = status;
      res.setHeader('Cache-Control', JOB_STATUS_CACHE_CONTROL);
      finish();
    };
    if (this.options.tracing) context.with(traceHttpRequest(req, res), send);
    else send();
    recordHttpRequest('GET', JOB_STATUS_ROUTE, status, (performance.now() - started) / 1000);
  }
}
