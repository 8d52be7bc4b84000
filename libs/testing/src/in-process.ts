import { Test, type TestingModule } from '@nestjs/testing';
import type { Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startPostgres, type Postgres } from './infra.js';

export interface InProcess {
  module: TestingModule;
  db: DataSource;
  stop(): Promise<void>;
}

/**
 * A service's providers in-process against a real, freshly migrated private Postgres, with no NATS, no
 * build and no spawned process (the "medium" test level). `open` migrates the service's schema (the
 * service passes `openDatabase` of @bns/service-kit with its own entities and migrations); `providers`
 * gets that data source and returns what the module needs beside the providers under test (the
 * DataSource and Transactions that KitModule provides in the running service).
 */
export async function inProcessModule(
  open: (url: string) => Promise<DataSource>,
  providers: (db: DataSource) => Provider[],
): Promise<InProcess> {
  let pg: Postgres | undefined;
  let db: DataSource | undefined;
  try {
    pg = await startPostgres();
    db = await open(pg.url);
    const module = await Test.createTestingModule({ providers: providers(db) }).compile();
    const started = { pg, db };
    return {
      module,
      db,
      async stop() {
        await module.close();
        await started.db.destroy();
        await started.pg.stop();
      },
    };
  } catch (err) {
    await db?.destroy().catch(() => undefined);
    await pg?.stop().catch(() => undefined);
    throw err;
  }
}
