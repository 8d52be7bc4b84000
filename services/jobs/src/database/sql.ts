import type { DataSource, QueryRunner } from 'typeorm';

/** One SQL statement → its rows (also for UPDATE … RETURNING, which TypeORM's plain query() wraps). */
export type Sql = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

function sqlOn(runner: QueryRunner): Sql {
  return async <T>(text: string, params?: unknown[]) => (await runner.query(text, params, true)).records as T[];
}

/** A statement on its own (autocommit). */
export function sqlOf(dataSource: DataSource): Sql {
  return async <T>(text: string, params?: unknown[]) => {
    const runner = dataSource.createQueryRunner();
    try {
      return await sqlOn(runner)<T>(text, params);
    } finally {
      await runner.release();
    }
  };
}

/** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(dataSource: DataSource, work: (sql: Sql) => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    const result = await work(sqlOn(runner));
    await runner.commitTransaction();
    return result;
  } catch (err) {
    await runner.rollbackTransaction().catch(() => undefined);
    throw err;
  } finally {
    await runner.release();
  }
}
