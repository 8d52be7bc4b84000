import { DataSource, type EntitySchema, type MixedList } from 'typeorm';

export interface DatabaseOptions {
  url: string;
  /** The service's own schema; nothing else is touched. */
  schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  poolSize?: number;
  applicationName?: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

export function createDataSource(options: DatabaseOptions): DataSource {
  if (!SCHEMA_NAME.test(options.schema)) throw new Error(`invalid schema name "${options.schema}"`);
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    // Each service keeps its migration history beside its tables, never in a shared table.
    migrationsTableName: `${options.schema}_migrations`,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? options.schema,
      // Raw SQL in the service can name its tables without a schema prefix.
      options: `-c search_path=${options.schema}`,
    },
  });
}

/**
 * Runs pending migrations under a Postgres advisory lock keyed by the schema, so replicas that start
 * together apply each migration once, in order, and the later ones find nothing to do.
 */
export async function migrateWithLock(dataSource: DataSource, schema: string): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const lockKey = `bns:migrations:${schema}`;
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
    // Postgres checks CREATE on the database even for IF NOT EXISTS, so a role that only owns its
    // pre-created schema must not ask.
    const [{ exists }] = await runner.query('SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists', [
      schema,
    ]);
    if (!exists) await runner.query(`CREATE SCHEMA "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch(() => undefined);
    await runner.release();
  }
}

/** Connects, then migrates under the lock. */
export async function openDatabase(options: DatabaseOptions): Promise<DataSource> {
  const dataSource = createDataSource(options);
  await dataSource.initialize();
  await migrateWithLock(dataSource, options.schema);
  return dataSource;
}
