import { AuditTrail } from './audit/audit-trail.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { RpcClient, runService, tracingEnabled } from '@bns/service-kit';
import { AuthFailures } from './auth/auth-failures.js';
import { TOKEN_VERIFIER } from './auth/auth.guard.js';
import { authEnvProblems, authSource, describeAuthSource } from './auth/auth.module.js';
import { authenticateThenParse } from './auth/authenticate.middleware.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import { GATEWAY_ENV, publicConfigEnvProblems, type GatewayEnv } from './config/env.js';
import { GatewayModule } from './gateway.module.js';
import { servicePings } from './health/readiness.js';
import { HOT_ROUTES, installJobStatusFastPath } from './job-status-fast-path/index.js';
import { verifyJsonBody } from './http/json-body.js';
import { LoadShedder } from './http/load-shedding.js';
import { lingerOnRefusal } from './http/refusal-linger.js';
import { trackShedding } from './metrics/gateway.metrics.js';
import { addSchemaComponents } from './http/openapi.js';
import { securityHeaderSets, securityHeaders } from './http/security-headers.js';
import { trustProxySetting } from './http/trust-proxy.js';
import { JobStarter } from './jobs/job-starter.js';
import { ContactsApi } from './contacts/contacts.api.js';
import { MediaUploads } from './media/media-uploads.js';
import { ApiKeyVerifier } from './api-keys/api-key-verifier.js';
import { KeyRateLimiter } from './v1/key-rate-limiter.js';
import { v1OpenApiDocument } from './v1/openapi.js';
import { v1Router } from './v1/v1.router.js';
import { GatewayIoAdapter } from './realtime/io-adapter.js';
import { httpTraceMiddleware } from './telemetry/http-trace.middleware.js';
import { serveWebApp } from './web/web-app.js';

/** TRUST_PROXY problems, named, before anything starts. */
function proxyEnvProblems(env: GatewayEnv): string[] {
  try {
    trustProxySetting(env.TRUST_PROXY);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

await runService({
  name: 'gateway',
  env: GATEWAY_ENV,
  defaultPort: 8080,
  natsHandlers: false,
  httpLogging: true,
  bodyParser: false,
  quietRoutes: HOT_ROUTES,
  // A burst of new connections (a thousand clients at once) past Node's 511 waited a second each for
  // a SYN retry (gateway-pollers' overload phase: 36 listen-queue overflows, 503s at ~1 s).
  listenBacklog: (env) => env.LISTEN_BACKLOG,
  validate: (env) => [...authEnvProblems(env), ...publicConfigEnvProblems(env), ...proxyEnvProblems(env)],
  module: (env) => GatewayModule.forRoot(env),
  // The auth line says which issuer and key source tokens are verified against (README: checking a Clerk setup).
  readiness: (ctx) => [{ name: 'auth', check: async () => authSource(ctx.env) }, ...servicePings(ctx)],
  configure: (nestApp, { env }) => {
    const app = nestApp as NestExpressApplication;
    app.get(Logger).log(describeAuthSource(authSource(env)), 'Auth');
    // Order matters: cheap refusals first, the body only after the caller is known.
    app.disable('x-powered-by');
    // No ETag hashed from every JSON body (each 404 and 429 a poller gets, too): API answers are
    // no-store, so no client ever revalidates them; job-status sets the jobs service's own ETag; the web
    // app's files keep theirs (express.static has its own setting) and its index.html fallback is
    // revalidated on Last-Modified.
    app.set('etag', false);
    app.set('trust proxy', trustProxySetting(env.TRUST_PROXY));
    const headers = securityHeaderSets({
      clerkOrigin: env.AUTH_MODE === 'clerk' && env.CLERK_ISSUER ? new URL(env.CLERK_ISSUER).origin : undefined,
    });
    // First, so every later refusal of a request whose body is still arriving answers, never resets.
    app.use(lingerOnRefusal());
    app.use(securityHeaders(headers));
    if (env.CORS_ORIGINS.length > 0) app.enableCors({ origin: env.CORS_ORIGINS, credentials: true });
    const rpc = app.get(RpcClient);
    const shedder = new LoadShedder({
      maxInFlight: env.SHED_MAX_IN_FLIGHT,
      reads: { max: env.SHED_READS_MAX_IN_FLIGHT, floor: env.SHED_READS_MIN_IN_FLIGHT, targetMs: env.SHED_TARGET_MS },
      maxLagMs: env.SHED_MAX_LAG_MS,
      waitingLongerThan: (ms) => rpc.waitingLongerThan(ms),
    });
    rpc.observeRoundTrips(shedder.roundTrip);
    trackShedding(shedder);
    app.use(shedder.middleware);
    // Without an exporter every span is a no-op: the middleware would only cost each request its work.
    if (tracingEnabled()) app.use(httpTraceMiddleware);
    // Job-status polls answered before Express when this replica can (FrontDoor), and the hot routes' log.
    installJobStatusFastPath(app, { env, headers: headers.app, shedder });
    // The /v1 API answers every /v1 path itself (API keys only, problem+json), before the web app and sign-in.
    app.use(
      '/v1',
      v1Router({
        keys: app.get(ApiKeyVerifier),
        rpc,
        starter: app.get(JobStarter),
        contacts: app.get(ContactsApi),
        media: app.get(MediaUploads),
        limiter: new KeyRateLimiter(env.V1_RATE_LIMIT_QUOTA, env.V1_RATE_LIMIT_WINDOW_S),
        failures: app.get(AuthFailures),
        audit: app.get(AuditTrail),
        bodyLimit: env.V1_BODY_LIMIT,
        startBodyLimit: env.START_BODY_LIMIT,
        openApi: v1OpenApiDocument,
        docsHeaders: headers.docs,
      }),
    );
    serveWebApp(app, env.WEB_DIST);
    // Depth is checked on the raw bytes before JSON.parse (verifyJsonBody); each call's own size rule
    // (BodySizeGuard) is checked before anything crosses NATS.
    app.use(
      authenticateThenParse({
        verifier: app.get<TokenVerifier>(TOKEN_VERIFIER),
        failures: app.get(AuthFailures),
        bodyLimit: env.BODY_LIMIT,
        // A 50,000-row personalised start needs more room (it is staged, never one NATS message).
        routeBodyLimits: { '/start-bulk-messages': env.START_BODY_LIMIT, '/api/contacts/import': env.START_BODY_LIMIT },
        preAuthBodyLimit: env.PRE_AUTH_BODY_LIMIT,
        verify: verifyJsonBody,
      }),
    );
    app.useWebSocketAdapter(new GatewayIoAdapter(app, env.CORS_ORIGINS));
    const document = addSchemaComponents(
      SwaggerModule.createDocument(
        app,
        new DocumentBuilder()
          .setTitle('Business Notification System API')
          .setDescription('The gateway: the only public door. Every call needs `Authorization: Bearer <token>`.')
          .setVersion('0.1.0')
          .addBearerAuth()
          .build(),
      ),
    );
    // Prometheus' scrape endpoint is for ops (the chart's annotations), not part of the public API.
    delete document.paths['/metrics'];
    SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
    SwaggerModule.setup('v1/docs', app, v1OpenApiDocument() as OpenAPIObject, {
      swaggerOptions: { url: '/v1/openapi.json' },
      jsonDocumentUrl: 'v1/docs-json',
    });
  },
});
