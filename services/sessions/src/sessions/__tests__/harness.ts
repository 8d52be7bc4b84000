import { Test, type TestingModule } from '@nestjs/testing';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Provider, Type } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { connectNats, ensureEventsStream, EventBus, openDatabase, SERVICE_ENV, Transactions } from '@bns/service-kit';
import { SESSIONS_ENV, type SessionsEnv } from '../../config/env.js';
import { startNats, startPostgres, type Nats, type Postgres } from '@bns/testing';
import { SESSIONS_ENTITIES, SESSIONS_MIGRATIONS } from '../../database/schema.js';

/**
 * In-process harness: the sessions providers under test in a Nest testing module, on a real Postgres
 * (migrated like production) and, when asked, a real NATS with the EVENTS stream. No build, no spawn.
 */
export interface Harness {
  pg: Postgres;
  nats?: Nats;
  nc?: NatsConnection;
  db: DataSource;
  module: TestingModule;
  get<T>(type: Type<T>): T;
  stop(): Promise<void>;
}

/** The service's env as the tests run it (only what the providers under test read). */
export const TEST_ENV: Partial<SessionsEnv> = {
  SHARD_INDEX: 0,
  SESSIONS_SHARDS: 1,
  SEND_TIMEOUT_MS: 5000,
  SESSIONS_LEDGER_BATCH: SESSIONS_ENV.SESSIONS_LEDGER_BATCH.defaultValue,
  SESSIONS_LEDGER_STATEMENTS: SESSIONS_ENV.SESSIONS_LEDGER_STATEMENTS.defaultValue,
};

/** `extra`: providers made with the NATS connection (an RpcClient), when `nats` is on. */
export async function startHarness(
  providers: Provider[],
  options: { nats?: boolean; env?: Partial<SessionsEnv>; extra?: (nc: NatsConnection) => Provider[] } = {},
): Promise<Harness> {
  const [pg, nats] = await Promise.all([startPostgres(), options.nats ? startNats() : Promise.resolve(undefined)]);
  const db = await openDatabase({
    url: pg.url,
    schema: 'sessions',
    entities: SESSIONS_ENTITIES,
    migrations: SESSIONS_MIGRATIONS,
  });
  const nc = nats ? await connectNats(nats.url, 'sessions-in-process') : undefined;
  if (nc) await ensureEventsStream(nc);
  const module = await Test.createTestingModule({
    providers: [
      { provide: DataSource, useValue: db },
      { provide: Transactions, useValue: new Transactions(db) },
      { provide: SERVICE_ENV, useValue: { ...TEST_ENV, ...options.env } },
      ...(nc ? [{ provide: EventBus, useValue: new EventBus(nc) }, ...(options.extra?.(nc) ?? [])] : []),
      ...providers,
    ],
  }).compile();
  return {
    pg,
    nats,
    nc,
    db,
    module,
    get: (type) => module.get(type),
    async stop() {
      await module.close();
      await nc?.drain();
      await db.destroy();
      await Promise.all([nats?.stop(), pg.stop()]);
    },
  };
}
