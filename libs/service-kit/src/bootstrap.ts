import 'reflect-metadata';
import { hostname } from 'node:os';
import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Msg } from '@nats-io/transport-node';
import { Logger } from 'nestjs-pino';
import { pingKeyOf, subjectOf, type PingReply, type SERVICES } from '@bns/contracts';
import { COMMON_ENV, DATABASE_ENV, env as envVar, loadEnvOrExit, type EnvOf, type EnvVar } from './config/env.js';
import { openDatabase, type DatabaseOptions } from './database/database.js';
import { runChecks, type ReadinessCheck } from './health/health.js';
import { KitModule, type BaseEnv, type KitContext } from './kit.module.js';
import type { QuietRoute } from './logging/logging.js';
import { collectProcessMetrics, httpMetricsMiddleware } from './metrics/metrics.js';
import { MetricsEndpoint } from './metrics/metrics-server.js';
import { connectNats } from './nats/connection.js';
import { ensureEventsStream, EventBus } from './nats/event-bus.js';
import { KitNatsServer } from './nats/nats-server.strategy.js';
import { RpcClient } from './nats/rpc-client.js';
import { startTelemetry } from './telemetry/telemetry.js';

type Spec = Record<string, EnvVar<unknown>>;
type Microservice = (typeof SERVICES)[number];
/** A service's whole env: its own variables, the common ones, PORT, and the database's when it has one. */
export type ServiceEnv<S extends Spec> = EnvOf<S & typeof COMMON_ENV> & BaseEnv & Partial<EnvOf<typeof DATABASE_ENV>>;

export interface ServiceDefinition<S extends Spec> {
  name: Microservice | 'gateway';
  /** The service's own variables, on top of the common ones. */
  env: S;
  defaultPort: number;
  database?: Omit<DatabaseOptions, 'url' | 'poolSize' | 'applicationName'>;
  /** Sessions only: which shard this replica is. Others share one queue group. */
  shard?: (env: ServiceEnv<S>) => number;
  /** Listen for NATS requests (every service but the gateway). */
  natsHandlers: boolean;
  module: (env: ServiceEnv<S>) => Type | DynamicModule;
  /** Cross-variable checks; each returned line names a variable and stops the process. */
  validate?: (env: ServiceEnv<S>) => string[];
  /** Extra readiness checks (the gateway pings every service). */
  readiness?: (ctx: KitContext<ServiceEnv<S>>) => ReadinessCheck[];
  /** Last touches on the HTTP app (the gateway's middleware, static files, docs). */
  configure?: (app: INestApplication, ctx: KitContext<ServiceEnv<S>>) => void | Promise<void>;
  httpLogging?: boolean;
  /** GET routes left out of per-request HTTP logging (see KitContext.quietRoutes). */
  quietRoutes?: QuietRoute[];
  /** Let Nest install its JSON/urlencoded body parsers (the gateway installs its own, after auth). */
  bodyParser?: boolean;
  /** The service's own metrics (`src/metrics/<svc>.metrics.ts`): registered once its context exists. */
  metrics?: (ctx: KitContext<ServiceEnv<S>>) => void;
  /**
   * The HTTP socket's accept queue (Node's default is 511; the kernel caps it at net.core.somaxconn).
   * Connections arriving past it are dropped and their SYN is retried a whole second later.
   */
  listenBacklog?: (env: ServiceEnv<S>) => number;
}

const PORT_ENV = (defaultPort: number) => ({
  PORT: envVar.int(
    'HTTP port of this process (health probes; the public API on the gateway); metrics are on METRICS_PORT',
    defaultPort,
    { min: 0, max: 65535 },
  ),
});

/**
 * Boots a service: env → telemetry → metrics port → NATS → database + migrations → Nest (HTTP + NATS handlers) →
 * ping responder. Every step that fails stops the process with a message saying which.
 */
export async function runService<S extends Spec>(def: ServiceDefinition<S>): Promise<INestApplication> {
  const spec: Spec = { ...COMMON_ENV, ...(def.database ? DATABASE_ENV : {}), ...PORT_ENV(def.defaultPort), ...def.env };
  // loadEnv checked every variable of `spec` against its parser, so the object has the spec's types.
  const env = loadEnvOrExit(spec, def.name) as ServiceEnv<S>;
  const base = env;
  const problems = def.validate?.(env) ?? [];
  if (base.METRICS_PORT !== 0 && base.METRICS_PORT === base.PORT)
    problems.push(`METRICS_PORT must differ from PORT (both are ${base.PORT})`);
  if (problems.length > 0) {
    process.stderr.write(`${def.name}: Invalid environment:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  await startTelemetry(def.name);
  // Before any connection: a metrics port that is taken stops the process at once, and the process
  // metrics are there to scrape while it connects and migrates.
  collectProcessMetrics({ bns_service: def.name });
  const metricsEndpoint = await MetricsEndpoint.listen(base.METRICS_PORT, base.BIND_ADDRESS);

  const shard = def.shard?.(env);
  const instance = `${hostname()}:${process.pid}`;
  const nc = await connectNats(base.NATS_URL, `${def.name}${shard === undefined ? '' : `-${shard}`}@${instance}`);
  await ensureEventsStream(nc);
  const dataSource = def.database
    ? await openDatabase({
        ...def.database,
        url: base.DATABASE_URL!,
        poolSize: base.DATABASE_POOL_SIZE,
        applicationName: def.name,
      })
    : undefined;

  const readiness: ReadinessCheck[] = [
    {
      name: 'nats',
      check: async () => {
        if (nc.isClosed()) throw new Error('connection closed');
        await nc.flush();
      },
    },
  ];
  if (dataSource) readiness.push({ name: 'postgres', check: async () => void (await dataSource.query('SELECT 1')) });

  const rpc = new RpcClient(nc, { shards: base.SESSIONS_SHARDS, timeoutMs: base.RPC_TIMEOUT_MS });
  const ctx: KitContext<ServiceEnv<S>> = {
    info: { name: def.name, instance, shard, shards: base.SESSIONS_SHARDS, startedAt: Date.now() },
    env,
    nc,
    rpc,
    events: new EventBus(nc, rpc),
    dataSource,
    readiness,
    httpLogging: def.httpLogging ?? false,
    quietRoutes: def.quietRoutes,
    natsHandlers: def.natsHandlers,
  };
  readiness.push(...(def.readiness?.(ctx) ?? []));
  def.metrics?.(ctx);

  const app = await NestFactory.create(
    {
      module: class AppRoot {},
      imports: [KitModule.forService(ctx), def.module(env)],
      // Closed with the app (its onApplicationShutdown).
      providers: [{ provide: MetricsEndpoint, useFactory: () => metricsEndpoint }],
    } as DynamicModule,
    { bufferLogs: true, bodyParser: def.bodyParser ?? true },
  );
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  app.use(httpMetricsMiddleware);
  await def.configure?.(app, ctx);

  if (def.natsHandlers) {
    const queue = shard === undefined ? def.name : `${def.name}.${shard}`;
    app.connectMicroservice(
      { strategy: new KitNatsServer(base.NATS_URL, `${def.name}-handlers@${instance}`, queue, shard) },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
    answerPings(ctx, def.name as Microservice, queue);
  }
  // Node's listen(port[, host][, backlog]): without BIND_ADDRESS the host is left out (every address),
  // and a number right after the port is the backlog.
  const listenArgs: unknown[] = [
    ...(base.BIND_ADDRESS === undefined ? [] : [base.BIND_ADDRESS]),
    ...(def.listenBacklog ? [def.listenBacklog(env)] : []),
  ];
  await app.listen(base.PORT, ...(listenArgs as [string]));
  const host =
    base.BIND_ADDRESS === undefined
      ? ''
      : base.BIND_ADDRESS.includes(':')
        ? `[${base.BIND_ADDRESS}]`
        : base.BIND_ADDRESS;
  app
    .get(Logger)
    .log(
      `${def.name}${shard === undefined ? '' : ` shard ${shard}/${base.SESSIONS_SHARDS}`} listening on ${host}:${base.PORT}, metrics on ${host}:${metricsEndpoint.port}/metrics`,
    );
  return app;
}

/**
 * `<service>.ping` (sessions: `sessions.<k>.ping`) answers only while this replica's own dependencies
 * are up, so the gateway's /readyz reflects the whole system.
 */
function answerPings(ctx: KitContext, service: Microservice, queue: string): void {
  const subject = subjectOf(pingKeyOf(service), ctx.info.shard);
  ctx.nc.subscribe(subject, {
    queue,
    callback: (err, msg: Msg) => {
      if (err) return;
      const id = (msg.json<{ id?: string }>() ?? {}).id;
      void runChecks(ctx.readiness).then(({ ready, checks }) => {
        const reply: PingReply = {
          service,
          instance: ctx.info.instance,
          version: process.env.npm_package_version ?? '0.1.0',
          uptimeSeconds: Math.round((Date.now() - ctx.info.startedAt) / 1000),
          ...(ctx.info.shard === undefined ? {} : { shard: ctx.info.shard, shards: ctx.info.shards }),
        };
        const failed = checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.error}`);
        msg.respond(
          JSON.stringify(
            ready
              ? { id, response: reply, isDisposed: true }
              : {
                  id,
                  err: { kind: 'unavailable', code: 'SERVICE_UNAVAILABLE', message: failed.join('; ') },
                  isDisposed: true,
                },
          ),
        );
      });
    },
  });
}
