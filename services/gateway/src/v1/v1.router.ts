import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  IDEMPOTENCY_KEY_HEADER,
  idempotencyKeySchema,
  INTEGRATIONS_MESSAGES as M,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  RESULTS_MESSAGES,
  apiKeyActor,
  INTEGRATIONS_LIMITS,
  type ApiKeyPrincipal,
  type AuditKind,
  type ApiKeyScope,
} from '@bns/contracts';
import type { RpcClient } from '@bns/service-kit';
import type { ApiKeyVerifier } from '../api-keys/api-key-verifier.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { details } from '../audit/audited.js';
import type { AuthFailures } from '../auth/auth-failures.js';
import { bearerToken } from '../auth/token-verifier.js';
import type { ContactsApi } from '../contacts/contacts.api.js';
import type { JobStarter } from '../jobs/job-starter.js';
import type { MediaUploads } from '../media/media-uploads.js';
import { BodyNotJsonError, declaresJson, verifyJsonBody, type SizedRequest } from '../http/json-body.js';
import type { KeyRateLimiter } from './key-rate-limiter.js';
import { problem, problemOf, sendProblem } from './problem.js';
import { V1Api } from './v1.api.js';

export interface V1RouterDeps {
  keys: ApiKeyVerifier;
  rpc: RpcClient;
  starter: JobStarter;
  contacts: ContactsApi;
  media: MediaUploads;
  limiter: KeyRateLimiter;
  failures: AuthFailures;
  /** Records the actions a key performs (campaigns, opt-outs) in its owner's audit log. */
  audit: AuditTrail;
  bodyLimit: string;
  startBodyLimit: string;
  /** The OpenAPI document of /v1 (built once, on first ask). */
  openApi: () => object;
  /** Headers the docs page needs instead of the app's (its CSP allows Swagger UI's inline styles). */
  docsHeaders: readonly (readonly [string, string])[];
}

type V1Request = Request & { principal?: ApiKeyPrincipal; keyPrefix?: string; rawBody?: Buffer };
const locals = (req: Request) => req as V1Request;

/** An async handler whose failure goes to the router's error handler. */
const handle =
  (fn: (req: V1Request, res: Response) => Promise<unknown>): RequestHandler =>
  (req, res, next) => {
    fn(locals(req), res).catch(next);
  };

/**
 * The /v1 API, authorised by API keys only: a person's sign-in token is refused here, and an API key
 * is refused on every other path (the rest of the gateway verifies sign-in tokens only). Every answer
 * that is an error is RFC 9457 problem+json with a stable `type` (PROBLEMS in contracts); every
 * answer to a key carries its RateLimit / RateLimit-Policy; every POST honours Idempotency-Key. The
 * routes themselves (V1Api) map to the owning services' NATS calls, bounded by the key's owner.
 */
export function v1Router(deps: V1RouterDeps): Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  const api = new V1Api(deps.rpc, deps.starter, deps.contacts, deps.media);

  // Public: the document, its rendering (Swagger UI, further down the app) and the problem types.
  router.get('/openapi.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.json(deps.openApi());
  });
  router.use('/docs', (_req, res, next) => {
    for (const [name, value] of deps.docsHeaders) res.setHeader(name, value);
    next('router');
  });
  router.get('/problems/:slug', (req, res) => {
    const found = Object.values(PROBLEMS).find((p) => p.slug === req.params.slug);
    if (!found) return sendProblem(res, problem('notFound', M.notFound));
    res.json({ type: found.type, title: found.title, status: found.status });
  });

  router.use(authenticate(deps));
  router.use((req, res, next) => {
    const principal = locals(req).principal!;
    const state = deps.limiter.take(principal.keyId);
    res.setHeader('RateLimit-Policy', deps.limiter.policy);
    res.setHeader('RateLimit', deps.limiter.header(state));
    if (state.allowed) return next();
    res.setHeader('Retry-After', String(state.resetS));
    sendProblem(res, problem('rateLimited', `Too many requests for this API key: retry after ${state.resetS} s`));
  });

  const need =
    (scope: ApiKeyScope, ...or: ApiKeyScope[]): RequestHandler =>
    (req, res, next) =>
      [scope, ...or].some((s) => locals(req).principal!.scopes.includes(s))
        ? next()
        : sendProblem(res, problem('insufficientScope', M.scopeMissing(scope)));
  const read = need('read');
  const userOf = (req: V1Request) => req.principal!.userId;
  const json = (status: number) => (res: Response, body: unknown) => res.status(status).json(body);
  /** The action is in the owner's audit log, by the key's prefix, before the answer goes out. */
  const record = (req: V1Request, kind: AuditKind, what: Record<string, unknown> = {}) =>
    deps.audit.record(kind, { userId: userOf(req), actor: apiKeyActor(req.keyPrefix!), ip: req.ip }, details(what));

  // An attachment is a multipart stream, never parsed as JSON: before the body parser. The same file
  // twice answers the same mediaId, so a retry needs no Idempotency-Key.
  router.post(
    '/media',
    need('messages:send', 'campaigns:write'),
    handle(async (req, res) => json(201)(res, await api.upload(userOf(req), req))),
  );
  router.use(parseBody(deps));
  router.use(idempotency(deps.rpc));

  router.get(
    '/media/:id',
    read,
    handle(async (req, res) => json(200)(res, await api.mediaItem(userOf(req), String(req.params.id)))),
  );

  router.get(
    '/account',
    read,
    handle(async (req, res) => json(200)(res, await api.account(userOf(req)))),
  );
  router.get(
    '/audit',
    read,
    handle(async (req, res) => json(200)(res, await api.audit(userOf(req), req.query))),
  );
  router.get(
    '/templates',
    read,
    handle(async (req, res) => json(200)(res, await api.templates(userOf(req)))),
  );
  router.get(
    '/campaigns',
    read,
    handle(async (req, res) => json(200)(res, await api.campaigns(userOf(req), req.query))),
  );
  router.post(
    '/campaigns',
    need('campaigns:write'),
    handle(async (req, res) => {
      const started = await api.startCampaign(userOf(req), req.body, idempotencyKeyOf(req));
      await record(req, 'campaign.started', { campaignId: started.id });
      json(201)(res, started);
    }),
  );
  router.get(
    '/campaigns/:id',
    read,
    handle(async (req, res) => json(200)(res, await api.campaign(userOf(req), String(req.params.id)))),
  );
  router.get(
    '/campaigns/:id/results',
    read,
    handle(async (req, res) => json(200)(res, await api.results(userOf(req), String(req.params.id), req.query))),
  );
  for (const action of ['pause', 'resume', 'cancel'] as const) {
    router.post(
      `/campaigns/:id/${action}`,
      need('campaigns:write'),
      handle(async (req, res) => {
        const campaign = await api.campaignAction(userOf(req), String(req.params.id), action);
        await record(req, CAMPAIGN_KINDS[action], { campaignId: String(req.params.id) });
        json(200)(res, campaign);
      }),
    );
  }
  const id = (req: V1Request) => String(req.params.id);
  router.get(
    '/contacts',
    read,
    handle(async (req, res) => json(200)(res, await api.contacts(userOf(req), req.query))),
  );
  router.post(
    '/contacts',
    need('contacts:write'),
    handle(async (req, res) => json(201)(res, await api.createContact(userOf(req), req.body))),
  );
  router.get(
    '/contacts/:id',
    read,
    handle(async (req, res) => json(200)(res, await api.contact(userOf(req), id(req)))),
  );
  router.patch(
    '/contacts/:id',
    need('contacts:write'),
    handle(async (req, res) => json(200)(res, await api.updateContact(userOf(req), id(req), req.body))),
  );
  router.delete(
    '/contacts/:id',
    need('contacts:write'),
    handle(async (req, res) => json(200)(res, await api.deleteContact(userOf(req), id(req)))),
  );
  router.get(
    '/segments',
    read,
    handle(async (req, res) => json(200)(res, await api.segments(userOf(req)))),
  );
  router.post(
    '/segments',
    need('contacts:write'),
    handle(async (req, res) => json(201)(res, await api.createSegment(userOf(req), req.body))),
  );
  router.get(
    '/segments/:id/count',
    read,
    handle(async (req, res) => json(200)(res, await api.segmentCount(userOf(req), id(req)))),
  );
  router.delete(
    '/segments/:id',
    need('contacts:write'),
    handle(async (req, res) => json(200)(res, await api.deleteSegment(userOf(req), id(req)))),
  );
  router.get(
    '/opt-outs',
    read,
    handle(async (req, res) => json(200)(res, await api.optOuts(userOf(req), req.query))),
  );
  router.post(
    '/opt-outs',
    need('campaigns:write'),
    handle(async (req, res) => {
      const added = await api.addOptOuts(userOf(req), req.body);
      await record(req, 'opt_out.added', { added: (added as { added?: unknown }).added });
      json(201)(res, added);
    }),
  );
  router.delete(
    '/opt-outs',
    need('campaigns:write'),
    handle(async (req, res) => {
      const removed = await api.removeOptOut(userOf(req), req.query.phoneNumber);
      await record(req, 'opt_out.removed');
      json(200)(res, removed);
    }),
  );
  router.delete(
    '/opt-outs/:phone',
    need('campaigns:write'),
    handle(async (req, res) => {
      const removed = await api.removeOptOut(userOf(req), req.params.phone);
      await record(req, 'opt_out.removed');
      json(200)(res, removed);
    }),
  );
  router.post(
    '/messages',
    need('messages:send'),
    handle(async (req, res) => json(202)(res, await api.sendMessage(userOf(req), req.body, idempotencyKeyOf(req)))),
  );
  router.get(
    '/messages/:id',
    read,
    handle(async (req, res) => json(200)(res, await api.message(userOf(req), String(req.params.id)))),
  );

  router.use((req, res) => {
    const known = KNOWN_PATHS.some((p) => p.test(req.path));
    sendProblem(res, known ? problem('methodNotAllowed', M.methodNotAllowed) : problem('notFound', M.notFound));
  });
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendProblem(res, problemOf(err)));
  return router;
}

const CAMPAIGN_KINDS = { pause: 'campaign.paused', resume: 'campaign.resumed', cancel: 'campaign.cancelled' } as const;

const KNOWN_PATHS = [
  /^\/account$/,
  /^\/audit$/,
  /^\/templates$/,
  /^\/campaigns(\/[^/]+(\/(results|pause|resume|cancel))?)?$/,
  /^\/opt-outs(\/[^/]+)?$/,
  /^\/contacts(\/[^/]+)?$/,
  /^\/segments(\/[^/]+(\/count)?)?$/,
  /^\/messages(\/[^/]+)?$/,
  /^\/media(\/[^/]+)?$/,
];

/**
 * An API key in `Authorization: Bearer`, and nothing else. Failures count against the client
 * address like the sign-in token's do (a blocked address gets 429 first).
 */
function authenticate(deps: V1RouterDeps): RequestHandler {
  return (req, res, next) => {
    const address = req.ip ?? 'unknown';
    const refuse = (detail: string) => {
      const blocked = deps.failures.blocked(address);
      if (blocked) return sendProblem(res, problemOf(blocked));
      deps.failures.record(address);
      res.setHeader('WWW-Authenticate', 'Bearer');
      sendProblem(res, problem('unauthorized', detail));
    };
    const token = bearerToken(req.headers.authorization);
    if (!token) return refuse(M.keyInvalid);
    if (!token.startsWith('bns_')) return refuse(M.personTokenOnV1);
    deps.keys.verify(token).then(
      (principal) => {
        if (!principal) return refuse(M.keyInvalid);
        locals(req).principal = principal;
        locals(req).keyPrefix = token.slice(0, INTEGRATIONS_LIMITS.apiKeyPrefixLength);
        next();
      },
      (err: unknown) => sendProblem(res, problemOf(err)),
    );
  };
}

/** JSON bodies only, depth-checked on the raw bytes (as the rest of the gateway does), kept raw for the idempotency fingerprint. */
function parseBody(deps: V1RouterDeps): RequestHandler {
  const verify = (req: IncomingMessage, res: Parameters<typeof verifyJsonBody>[1], body: Buffer, encoding: string) => {
    (req as V1Request).rawBody = body;
    verifyJsonBody(req as SizedRequest, res, body, encoding);
  };
  const small = express.json({ limit: deps.bodyLimit, verify });
  const large = express.json({ limit: deps.startBodyLimit, verify });
  return (req, res, next) => {
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    if (!hasBody) return next();
    if (!declaresJson(req)) return next(new BodyNotJsonError());
    (req.method === 'POST' && req.path === '/campaigns' ? large : small)(req, res, next);
  };
}

function idempotencyKeyOf(req: V1Request): string | undefined {
  const header = req.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  return Array.isArray(header) ? header[0] : header;
}

/**
 * Idempotency-Key on POSTs: the integrations service holds the key for the first request and stores
 * its answer; the same key with the same method, path and body answers that again (Idempotent-Replayed:
 * true), with anything else 409. A 5xx is not kept, so the client may retry with the same key.
 */
function idempotency(rpc: RpcClient): RequestHandler {
  return (req, res, next) => {
    const key = idempotencyKeyOf(locals(req));
    if (req.method !== 'POST' || key === undefined) return next();
    if (!idempotencyKeySchema.safeParse(key).success)
      return sendProblem(
        res,
        problem('validation', RESULTS_MESSAGES.idempotencyKeyInvalid, {
          errors: { [IDEMPOTENCY_KEY_HEADER]: RESULTS_MESSAGES.idempotencyKeyInvalid },
        }),
      );
    const userId = locals(req).principal!.userId;
    const fingerprint = createHash('sha256')
      .update(`${req.method} ${req.baseUrl}${req.path}\n`)
      .update(locals(req).rawBody ?? Buffer.alloc(0))
      .digest('hex');
    const held = { userId, key, fingerprint };
    rpc.call('integrations.idempotency.begin', held).then(
      (begun) => {
        if (begun.state === 'done') {
          res
            .status(begun.status)
            .setHeader(
              'Content-Type',
              begun.status >= 400 ? `${PROBLEM_CONTENT_TYPE}; charset=utf-8` : 'application/json; charset=utf-8',
            );
          res.setHeader('Idempotent-Replayed', 'true');
          res.end(begun.body);
          return;
        }
        let body = '';
        const end = res.end.bind(res) as (...args: unknown[]) => Response;
        res.end = ((chunk?: unknown, ...rest: unknown[]) => {
          if (typeof chunk === 'string') body = chunk;
          else if (Buffer.isBuffer(chunk)) body = chunk.toString('utf8');
          return end(chunk, ...rest);
        }) as Response['end'];
        let settled = false;
        const settle = () => {
          if (settled) return;
          settled = true;
          const keep = res.writableFinished && res.statusCode < 500;
          const done = keep
            ? rpc.call('integrations.idempotency.finish', { ...held, status: res.statusCode, body })
            : rpc.call('integrations.idempotency.release', held);
          done.catch(() => undefined);
        };
        res.on('finish', settle);
        res.on('close', settle);
        next();
      },
      (err: unknown) => sendProblem(res, problemOf(err)),
    );
  };
}
