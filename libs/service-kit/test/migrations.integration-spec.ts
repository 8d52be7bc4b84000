import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { startPostgres, type Postgres } from '@bns/testing';
import { createDataSource, migrateWithLock } from '../src/database/database.js';

class CreateThings1700000000000 implements MigrationInterface {
  name = 'CreateThings1700000000000';
  async up(q: QueryRunner) {
    // Slow on purpose: without the lock, a second replica would start the same migration meanwhile.
    await q.query('SELECT pg_sleep(0.3)');
    await q.query('CREATE TABLE kit_test.things (id int PRIMARY KEY)');
  }
  async down(q: QueryRunner) {
    await q.query('DROP TABLE kit_test.things');
  }
}
class AddName1700000001000 implements MigrationInterface {
  name = 'AddName1700000001000';
  async up(q: QueryRunner) {
    await q.query('ALTER TABLE kit_test.things ADD COLUMN name text');
  }
  async down(q: QueryRunner) {
    await q.query('ALTER TABLE kit_test.things DROP COLUMN name');
  }
}

describe('migrations under an advisory lock', () => {
  let pg: Postgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(() => pg?.stop());

  const replica = () =>
    createDataSource({
      url: pg.url,
      schema: 'kit_test',
      entities: [],
      migrations: [CreateThings1700000000000, AddName1700000001000],
    });

  it('applies each migration once when four replicas start together, and again is a no-op', async () => {
    const replicas = [replica(), replica(), replica(), replica()];
    await Promise.all(replicas.map((r) => r.initialize()));
    try {
      const applied = await Promise.all(replicas.map((r) => migrateWithLock(r, 'kit_test')));
      // Exactly one replica applied the two migrations; the others found nothing to do.
      expect(applied.map((a) => a.length).sort()).toEqual([0, 0, 0, 2]);
      const rows = await replicas[0]!.query('SELECT name FROM kit_test.kit_test_migrations ORDER BY id');
      expect(rows.map((r: { name: string }) => r.name)).toEqual(['CreateThings1700000000000', 'AddName1700000001000']);
      expect(await migrateWithLock(replicas[1]!, 'kit_test')).toEqual([]);
      const cols = await replicas[0]!.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = 'kit_test' AND table_name = 'things' ORDER BY 1`,
      );
      expect(cols.map((c: { column_name: string }) => c.column_name)).toEqual(['id', 'name']);
    } finally {
      await Promise.all(replicas.map((r) => r.destroy()));
    }
  });

  it('keeps its history in its own schema, not a shared table', async () => {
    const ds = replica();
    await ds.initialize();
    try {
      const tables = await ds.query(
        `SELECT table_schema FROM information_schema.tables WHERE table_name LIKE '%migrations'`,
      );
      expect(tables).toEqual([{ table_schema: 'kit_test' }]);
    } finally {
      await ds.destroy();
    }
  });
});
