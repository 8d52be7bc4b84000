import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { inTransaction, rows } from '@bns/service-kit';
import type { EntityManager } from 'typeorm';
import { startHarness, type Harness } from './harness.js';

/**
 * The ledger's batched statements join an array of keys with a table (`unnest($1…)`). Run as a
 * prepared statement, Postgres soon settles on a generic plan costed for the table's size then, and
 * keeps it on that connection until the table is next analyzed: chosen while the table was small,
 * it scans the whole table for every batch once the table has grown. Through service-kit's `rows`,
 * such a statement is planned for each call, so it keeps to the index however the table grew.
 */
describe('array-driven statements (real Postgres): planned for the table as it is', () => {
  let h: Harness;
  const update = `UPDATE plan_probe t SET v = u.v FROM unnest($1::text[], $2::text[]) AS u(k, v) WHERE t.k = u.k`;

  beforeAll(async () => {
    h = await startHarness([]);
  }, 120_000);
  afterAll(async () => h?.stop());

  /** Sequential and index scans of plan_probe so far in this transaction. */
  async function scans(em: EntityManager): Promise<{ seq: number; idx: number }> {
    const [s] = await em.query(
      `SELECT seq_scan::int AS seq, idx_scan::int AS idx FROM pg_stat_xact_user_tables WHERE relid = 'plan_probe'::regclass`,
    );
    return s as { seq: number; idx: number };
  }

  /** A small table, the statement run `warmUp` times by `run` on the same connection, then the table grown to 20,000 rows. */
  async function grownAfterWarmUp(em: EntityManager, run: (keys: string[]) => Promise<unknown>): Promise<void> {
    await em.query(`CREATE TABLE plan_probe (k text PRIMARY KEY, v text NOT NULL)`);
    await em.query(`INSERT INTO plan_probe SELECT 'k' || g, 'v' FROM generate_series(1, 20) g`);
    for (let i = 0; i < 10; i++) await run([`k${1 + (i % 20)}`, `k${2 + (i % 19)}`]);
    await em.query(`INSERT INTO plan_probe SELECT 'k' || g, 'v' FROM generate_series(21, 20000) g`);
  }

  it('rows() plans a batch for each call: after the table grew, a batch uses the index, not a scan of all rows', async () => {
    await inTransaction(h.db, async (em) => {
      await grownAfterWarmUp(em, (keys) => rows(em, update, [keys, keys.map(() => 'w')]));
      const before = await scans(em);
      await rows(em, update, [
        ['k15000', 'k19999'],
        ['x', 'y'],
      ]);
      const after = await scans(em);
      expect(after.seq - before.seq).toBe(0);
      expect(after.idx - before.idx).toBeGreaterThan(0);
      expect(await em.query(`SELECT k, v FROM plan_probe WHERE k IN ('k15000', 'k19999') ORDER BY k`)).toEqual([
        { k: 'k15000', v: 'x' },
        { k: 'k19999', v: 'y' },
      ]);
      await em.query('DROP TABLE plan_probe');
    });
  });

  it('(the hazard it avoids) the same statement prepared keeps the plan it chose while the table was small', async () => {
    await inTransaction(h.db, async (em) => {
      const client = (await em.queryRunner!.connect()) as {
        query(c: { name: string; text: string; values: unknown[] }): Promise<unknown>;
      };
      const prepared = (keys: string[], values: string[]) =>
        client.query({ name: 'plan_probe_update', text: update, values: [keys, values] });
      await grownAfterWarmUp(em, (keys) =>
        prepared(
          keys,
          keys.map(() => 'w'),
        ),
      );
      const before = await scans(em);
      await prepared(['k15000', 'k19999'], ['x', 'y']);
      const after = await scans(em);
      expect(after.seq - before.seq).toBe(1);
      await em.query('DROP TABLE plan_probe');
      await em.query('DEALLOCATE plan_probe_update');
    });
  });
});
