import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { runService } from '@bns/service-kit';
import { authEnvProblems } from './auth/auth.module.js';
import { GATEWAY_ENV, type GatewayEnv } from './config/env.js';
import { GatewayModule } from './gateway.module.js';
import { servicePings } from './health/readiness.js';
import { httpTraceMiddleware } from './telemetry/http-trace.middleware.js';
import { serveWebApp } from './web/web-app.js';

await runService({
  name: 'gateway',
  env: GATEWAY_ENV,
  defaultPort: 8080,
  natsHandlers: false,
  httpLogging: true,
  validate: (env) => authEnvProblems(env as GatewayEnv),
  module: (env) => GatewayModule.forRoot(env as GatewayEnv),
  readiness: servicePings,
  configure: (nestApp, ctx) => {
    const app = nestApp as NestExpressApplication;
    const env = ctx.env as unknown as GatewayEnv;
    app.set('trust proxy', 1);
    app.use(httpTraceMiddleware);
    app.useBodyParser('json', { limit: env.BODY_LIMIT });
    if (env.CORS_ORIGINS.length > 0) app.enableCors({ origin: env.CORS_ORIGINS, credentials: true });
    const document = SwaggerModule.createDocument(
      app,
      new DocumentBuilder()
        .setTitle('Business Notification System API')
        .setDescription('The gateway: the only public door. Every call needs `Authorization: Bearer <token>`.')
        .setVersion('0.1.0')
        .addBearerAuth()
        .build(),
    );
    SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
    serveWebApp(app, env.WEB_DIST);
  },
});
