import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { LoggerModule } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import type { COMMON_ENV, EnvOf } from './config/env.js';
import { AppErrorFilter } from './errors/error.filter.js';
import { HealthController, READINESS_CHECKS, type ReadinessCheck } from './health/health.js';
import { loggerParams, type QuietRoute } from './logging/logging.js';
import { EventBus } from './nats/event-bus.js';
import { RpcClient } from './nats/rpc-client.js';
import { Transactions } from './database/transaction.js';
import { stopTelemetry, tracingEnabled } from './telemetry/telemetry.js';
import { RpcTraceInterceptor } from './telemetry/rpc-trace.interceptor.js';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
export const SERVICE_ENV = Symbol('SERVICE_ENV');
export const SERVICE_INFO = Symbol('SERVICE_INFO');

export interface ServiceInfo {
  name: string;
  instance: string;
  shard?: number;
  shards: number;
  startedAt: number;
}

/** Variables every process has (COMMON_ENV plus PORT); a service's own are added by its spec. */
export type BaseEnv = EnvOf<typeof COMMON_ENV> & { readonly PORT: number };

/** What the kit hands a service; `E` is the service's own typed env (its spec plus the common ones). */
export interface KitContext<E extends BaseEnv = BaseEnv> {
  info: ServiceInfo;
  env: E;
  nc: NatsConnection;
  rpc: RpcClient;
  events: EventBus;
  dataSource?: DataSource;
  readiness: ReadinessCheck[];
  httpLogging: boolean;
  /** GET routes left out of pino-http (hot polling paths; the service logs their errors and slow answers). */
  quietRoutes?: QuietRoute[];
  /**
   * Whether the process answers NATS requests (default true). Without handlers (the gateway) the trace
   * interceptor is not installed: it would do nothing for HTTP, yet any interceptor puts every HTTP
   * call through Nest's RxJS pipeline.
   */
  natsHandlers?: boolean;
}

/** A service's SLOW_REQUEST_MS, when its spec has one (the gateway's). */
function slowRequestMs(env: BaseEnv): number | undefined {
  const value = (env as BaseEnv & { SLOW_REQUEST_MS?: unknown }).SLOW_REQUEST_MS;
  return typeof value === 'number' ? value : undefined;
}

/** Closes what the kit opened, after Nest has stopped taking work. */
class KitShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly dataSource?: DataSource,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.nc.drain().catch(() => undefined);
    if (this.dataSource?.isInitialized) await this.dataSource.destroy().catch(() => undefined);
    await stopTelemetry().catch(() => undefined);
  }
}

/** Everything a service shares: logger, NATS, events, its database, health, error and trace plumbing. */
@Global()
@Module({})
export class KitModule {
  static forService<E extends BaseEnv>(ctx: KitContext<E>): DynamicModule {
    const database = ctx.dataSource
      ? [
          { provide: DataSource, useValue: ctx.dataSource },
          { provide: Transactions, useValue: new Transactions(ctx.dataSource) },
        ]
      : [];
    return {
      module: KitModule,
      imports: [
        LoggerModule.forRoot(
          loggerParams(ctx.info.name, ctx.env.LOG_LEVEL, ctx.httpLogging, slowRequestMs(ctx.env), ctx.quietRoutes),
        ),
      ],
      controllers: [HealthController],
      providers: [
        { provide: SERVICE_INFO, useValue: ctx.info },
        { provide: SERVICE_ENV, useValue: ctx.env },
        { provide: NATS_CONNECTION, useValue: ctx.nc },
        { provide: RpcClient, useValue: ctx.rpc },
        { provide: EventBus, useValue: ctx.events },
        { provide: READINESS_CHECKS, useValue: ctx.readiness },
        ...database,
        {
          provide: KitShutdown,
          useFactory: (nc: NatsConnection) => new KitShutdown(nc, ctx.dataSource),
          inject: [NATS_CONNECTION],
        },
        { provide: APP_FILTER, useClass: AppErrorFilter },
        // Only with an exporter (startTelemetry ran before this): without one, every request would still
        // pay the interceptor's Observable, context and no-op span for nothing.
        ...(ctx.natsHandlers === false || !tracingEnabled()
          ? []
          : [{ provide: APP_INTERCEPTOR, useClass: RpcTraceInterceptor }]),
      ],
      exports: [
        SERVICE_INFO,
        SERVICE_ENV,
        NATS_CONNECTION,
        RpcClient,
        EventBus,
        READINESS_CHECKS,
        ...database.map((d) => d.provide),
      ],
    };
  }
}
