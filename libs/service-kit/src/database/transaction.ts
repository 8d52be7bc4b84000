import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, QueryFailedError, type EntityManager, type ObjectLiteral } from 'typeorm';

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

/** The part of pg's client `rows` uses: a named statement is parsed once per connection, then only bound and run. */
interface PreparingClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: ObjectLiteral[] }>;
}

/**
 * Distinct statement texts run as named prepared statements, at most this many per process (each is
 * kept by every pooled connection that ran it); any more run unnamed, parsed and planned each time.
 */
const PREPARED_MAX = 500;
/** Statement text → its prepared statement's name, or null for one that runs unnamed (array-driven). */
const prepared = new Map<string, string | null>();

/**
 * Statements driven by an array parameter (`unnest($1…)`: the batched ones, which join many rows at
 * once) are not prepared unless their caller asks (`RowsOptions.prepare`). A prepared statement soon
 * runs a generic plan, costed once for "some array" and for the table's size at that moment, then
 * kept by the connection until the table is next analyzed: planned on a young, small table, it scans
 * the whole table for every batch (the sessions ledger's sent mark: 8.5 ms a call once the table had
 * grown to 10,000 rows). Unnamed, each call is planned for its actual array and the table as it is
 * (an index lookup per row); the planning is shared by the batch's rows.
 */
const ARRAY_DRIVEN = /\bunnest\s*\(\s*\$/i;

/**
 * The name of `text`'s prepared statement (the same on every connection), or undefined past
 * PREPARED_MAX or for an array-driven statement, unless `always` (see `RowsOptions.prepare`).
 */
function preparedName(text: string, always: boolean): string | undefined {
  let name = prepared.get(text);
  if (name === undefined) {
    if (prepared.size >= PREPARED_MAX) return undefined;
    name =
      ARRAY_DRIVEN.test(text) && !always
        ? null
        : `bns_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    prepared.set(text, name);
  }
  return name ?? undefined;
}

export interface RowsOptions {
  /**
   * `'always'`: an array-driven statement is prepared too. Only for one whose generic plan cannot
   * scan a whole table for each batch: one that reads no table (an insert of its arrays), or one that
   * always runs in transactions planned with sequential scans off (`plannedByIndex`) and reads only
   * tables with an index on what it looks up. Such a statement is then parsed once per connection and
   * soon planned once, not on every call.
   */
  prepare?: 'always';
}

/**
 * For the rest of the caller's transaction, the planner takes an index wherever there is one: a
 * generic plan made in it then looks rows up by key however small the table was when it was made
 * (a batch's statements join their arrays to the tables they update; on a table of a few thousand
 * rows, costs alone pick a scan of the whole table for every batch).
 */
export async function plannedByIndex(em: EntityManager): Promise<void> {
  await rows(em, 'SET LOCAL enable_seqscan = off');
}

/**
 * One raw statement → its rows, typed by the caller (also for UPDATE/DELETE … RETURNING). Runs on the
 * transaction of `em` when it has one. The hot paths run the same few statements over and over, so
 * each runs as a named prepared statement: Postgres parses it once per connection and may keep its
 * plan, instead of parsing and planning it on every call (most of a short statement's cost). Errors
 * are TypeORM's QueryFailedError, as for every other statement.
 */
export async function rows<T extends ObjectLiteral = ObjectLiteral>(
  em: EntityManager,
  text: string,
  params?: unknown[],
  options: RowsOptions = {},
): Promise<T[]> {
  const held = em.queryRunner && !em.queryRunner.isReleased ? em.queryRunner : undefined;
  const runner = held ?? em.connection.createQueryRunner();
  try {
    const name = preparedName(text, options.prepare === 'always');
    if (name === undefined) return (await runner.query(text, params, true)).records as T[];
    const client = (await runner.connect()) as PreparingClient;
    try {
      return (await client.query({ name, text, values: params ?? [] })).rows as T[];
    } catch (err) {
      throw new QueryFailedError(text, params ?? [], err as Error);
    }
  } finally {
    if (!held) await runner.release();
  }
}

/** The first row of a statement, or undefined. */
export async function row<T extends ObjectLiteral = ObjectLiteral>(
  em: EntityManager,
  text: string,
  params?: unknown[],
): Promise<T | undefined> {
  return (await rows<T>(em, text, params))[0];
}

/**
 * The rows of a batched statement back in the order of its `count` inputs: each row carries its
 * input's 1-based position as `i` (`unnest(…) WITH ORDINALITY AS r(…, i)`); undefined where an input
 * had no row.
 */
export function inInputOrder<T extends { i: unknown }>(found: T[], count: number): Array<T | undefined> {
  const byPosition = new Map(found.map((r) => [Number(r.i), r]));
  return Array.from({ length: count }, (_, k) => byPosition.get(k + 1));
}
