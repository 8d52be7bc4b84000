import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { LoggerModule } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AppErrorFilter } from './errors/error.filter.js';
import { HealthController, READINESS_CHECKS, type ReadinessCheck } from './health/health.js';
import { loggerParams } from './logging/logging.js';
import { EventBus } from './nats/event-bus.js';
import { RpcClient } from './nats/rpc-client.js';
import { stopTelemetry } from './telemetry/telemetry.js';
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

export interface KitContext {
  info: ServiceInfo;
  env: Record<string, unknown> & { LOG_LEVEL: string };
  nc: NatsConnection;
  rpc: RpcClient;
  events: EventBus;
  dataSource?: DataSource;
  readiness: ReadinessCheck[];
  httpLogging: boolean;
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
  static forService(ctx: KitContext): DynamicModule {
    const database = ctx.dataSource ? [{ provide: DataSource, useValue: ctx.dataSource }] : [];
    return {
      module: KitModule,
      imports: [LoggerModule.forRoot(loggerParams(ctx.info.name, ctx.env.LOG_LEVEL, ctx.httpLogging))],
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
        { provide: APP_INTERCEPTOR, useClass: RpcTraceInterceptor },
      ],
      exports: [SERVICE_INFO, SERVICE_ENV, NATS_CONNECTION, RpcClient, EventBus, READINESS_CHECKS, ...database.map((d) => d.provide)],
    };
  }
}
