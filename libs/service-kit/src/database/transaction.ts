import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type ObjectLiteral } from 'typeorm';

/**
 * The one way every service runs a unit of work in a transaction and reads typed rows from raw SQL.
 * Repositories take an `EntityManager` (the transaction's, or the data source's own for autocommit)
 * so a service can compose several repository calls into one transaction:
 *
 *   await this.tx.run(async (em) => { await this.jobs.insert(em, job); await this.outbox.add(em, events); });
 *
 * Raw SQL belongs in repositories only; `rows` is what they use where Postgres features need it.
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  run<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return inTransaction(this.dataSource, work);
  }

  /** The data source's own manager: each statement commits on its own. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export function inTransaction<T>(dataSource: DataSource, work: (em: EntityManager) => Promise<T>): Promise<T> {
  return dataSource.transaction(work);
}

/**
 * One raw statement → its rows, typed by the caller (also for UPDATE/DELETE … RETURNING, whose plain
 * `query()` result TypeORM wraps as `[rows, count]`). Runs on the transaction of `em` when it has one.
 */
export async function rows<T extends ObjectLiteral = ObjectLiteral>(em: EntityManager, text: string, params?: unknown[]): Promise<T[]> {
  if (em.queryRunner && !em.queryRunner.isReleased) {
    return (await em.queryRunner.query(text, params, true)).records as T[];
  }
  const runner = em.connection.createQueryRunner();
  try {
    return (await runner.query(text, params, true)).records as T[];
  } finally {
    await runner.release();
  }
}

/** The first row of a statement, or undefined. */
export async function row<T extends ObjectLiteral = ObjectLiteral>(em: EntityManager, text: string, params?: unknown[]): Promise<T | undefined> {
  return (await rows<T>(em, text, params))[0];
}
