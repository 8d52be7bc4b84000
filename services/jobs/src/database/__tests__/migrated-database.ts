import { afterAll, beforeAll } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { openDatabase } from '@bns/service-kit';
import { startPostgres, type Postgres } from '@bns/testing';
import { JOBS_ENTITIES, JOBS_MIGRATIONS, JOBS_SCHEMA } from '../data-source.js';

/**
 * For the migration specs: a private Postgres with every jobs migration run (up to and including
 * `through`, so a spec that undoes the newest ones keeps undoing the same ones when later migrations
 * are added), opened before the calling `describe`'s tests and closed after them. Call it in the
 * `describe`; the result is the database.
 */
export function migratedDatabase(through?: (typeof JOBS_MIGRATIONS)[number]): () => DataSource {
  const migrations =
    through === undefined ? JOBS_MIGRATIONS : JOBS_MIGRATIONS.slice(0, JOBS_MIGRATIONS.indexOf(through) + 1);
  let pg: Postgres | undefined;
  let db: DataSource | undefined;
  beforeAll(async () => {
    pg = await startPostgres();
    db = await openDatabase({ url: pg.url, schema: JOBS_SCHEMA, entities: JOBS_ENTITIES, migrations, poolSize: 2 });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await pg?.stop();
  });
  return () => db!;
}
