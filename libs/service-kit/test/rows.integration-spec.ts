import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { QueryFailedError, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { startPostgres, type Postgres } from '@bns/testing';
import { createDataSource, migrateWithLock } from '../src/database/database.js';
import { inTransaction, row, rows } from '../src/database/transaction.js';
import { serializeError } from '../src/logging/logging.js';

class CreateItems1700000000000 implements MigrationInterface {
  name = 'CreateItems1700000000000';
  async up(q: QueryRunner) {
    await q.query(
      'CREATE TABLE kit_rows.items (id int PRIMARY KEY, phone text NOT NULL UNIQUE, n int NOT NULL DEFAULT 0)',
    );
  }
  async down(q: QueryRunner) {
    await q.query('DROP TABLE kit_rows.items');
  }
}

/** `rows` runs each statement as a named prepared statement on whichever connection it gets. */
describe('rows: raw statements as named prepared statements (real Postgres)', () => {
  let pg: Postgres;
  let db: DataSource;

  beforeAll(async () => {
    pg = await startPostgres();
    // Two connections (the migration lock holds one): the autocommit path must hand each back, or the third statement waits forever.
    db = createDataSource({
      url: pg.url,
      schema: 'kit_rows',
      entities: [],
      migrations: [CreateItems1700000000000],
      poolSize: 2,
    });
    await db.initialize();
    await migrateWithLock(db, 'kit_rows');
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await pg?.stop();
  });

  it('prepares a statement once per connection and runs it again by name, in a transaction and outside one', async () => {
    const insert = 'INSERT INTO items (id, phone) VALUES ($1, $2) RETURNING id, phone';
    const names = await inTransaction(db, async (em) => {
      expect(await rows(em, insert, [1, '91234567'])).toEqual([{ id: 1, phone: '91234567' }]);
      expect(await rows(em, insert, [2, '61234567'])).toEqual([{ id: 2, phone: '61234567' }]);
      return rows<{ name: string; statement: string }>(
        em,
        'SELECT name, statement FROM pg_prepared_statements ORDER BY name',
      );
    });
    expect(names.filter((p) => p.statement === insert)).toEqual([
      { name: expect.stringMatching(/^bns_[A-Za-z0-9_-]{24}$/), statement: insert },
    ]);

    // Autocommit: each statement on a pooled connection, handed back (the pool has two).
    for (let i = 0; i < 5; i++) {
      expect(await row(db.manager, 'UPDATE items SET n = n + 1 WHERE id = $1 RETURNING n', [1])).toEqual({ n: i + 1 });
    }
    expect(await rows(db.manager, 'SELECT id FROM items WHERE id = $1', [99])).toEqual([]);
  });

  it('a failing statement is a QueryFailedError with its code, rolls its transaction back, and logs no bound values', async () => {
    const failure = await inTransaction(db, async (em) => {
      await rows(em, 'INSERT INTO items (id, phone) VALUES ($1, $2)', [3, '51234567']);
      await rows(em, 'INSERT INTO items (id, phone) VALUES ($1, $2)', [4, '91234567']);
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect(failure).toMatchObject({ code: '23505' });
    expect(await rows(db.manager, 'SELECT id FROM items WHERE id = $1', [3])).toEqual([]);
    expect(JSON.stringify(serializeError(failure))).not.toContain('1234567');

    // The connection is still good for the next statement.
    expect(await row(db.manager, 'SELECT count(*)::int AS n FROM items')).toEqual({ n: 2 });
  });
});
