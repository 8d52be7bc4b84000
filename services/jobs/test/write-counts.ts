import pg from 'pg';
import { sleep } from '@bns/testing';

/** What Postgres counted so far: rows written per table, commits, statements and foreign-key lookups of the system's database. */
export interface Counts {
  byTable: Record<string, number>;
  commits: number;
  statements: number;
  /** The checks Postgres runs for a foreign key (a lookup and a row lock each), among `statements`. */
  keyLookups: number;
}

/**
 * Written by the clock, not by a campaign: the workers' heartbeats (more of them the slower the
 * machine), and the services' migration records (their counts may reach the statistics late).
 */
const notPerMessage = (table: string) => table === 'jobs.workers' || table.endsWith('_migrations');

/**
 * Reads the real server's counters (pg_stat_user_tables: rows inserted, updated and deleted;
 * pg_stat_database: commits; pg_stat_statements: statements, the foreign-key checks Postgres runs for
 * us included). `db` must be connected to the system's database with pg_stat_statements loaded.
 */
export async function countWrites(db: pg.Client): Promise<Counts> {
  const tables = (
    await db.query<{ t: string; n: string }>(
      "SELECT schemaname || '.' || relname AS t, n_tup_ins + n_tup_upd + n_tup_del AS n FROM pg_stat_user_tables",
    )
  ).rows;
  const byTable = Object.fromEntries(tables.filter((r) => !notPerMessage(r.t)).map((r) => [r.t, Number(r.n)]));
  const database = (await db.query<{ d: string }>('SELECT current_database() AS d')).rows[0].d;
  const commits = Number(
    (await db.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [database]))
      .rows[0].n,
  );
  // A foreign key's check as pg_stat_statements records it: `SELECT $2 FROM ONLY … FOR KEY SHARE OF x`.
  const calls = (
    await db.query<{ n: string; keys: string }>(
      `SELECT coalesce(sum(calls), 0) AS n,
              coalesce(sum(calls) FILTER (WHERE query LIKE 'SELECT % FROM ONLY %FOR KEY SHARE OF x'), 0) AS keys
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND query NOT ILIKE '%pg_stat%'`,
      [database],
    )
  ).rows[0];
  return { byTable, commits, statements: Number(calls.n), keyLookups: Number(calls.keys) };
}

/** Rows written in tables whose name starts with `prefix` (a schema: `jobs.`; '' for all). */
export const rowsOf = (c: Counts, prefix: string) =>
  Object.entries(c.byTable)
    .filter(([t]) => t.startsWith(prefix))
    .reduce((total, [, n]) => total + n, 0);

/**
 * A backend reports its table counts at the end of a transaction at most once a second, and one that
 * went idle with counts still pending reports them within 10 s (Postgres's idle flush interval); the
 * consumers of the event stream (the contact book, webhooks) may lag a little too. So this waits until
 * the counts have not moved for 11 s in a row, or 45 s at most (an idle system's heartbeats write a
 * row now and then).
 */
export async function settledWrites(db: pg.Client, quietSeconds = 11): Promise<Counts> {
  let last = await countWrites(db);
  for (let quiet = 0, waited = 0; quiet < quietSeconds && waited < 45; waited++) {
    await sleep(1000);
    const now = await countWrites(db);
    quiet = rowsOf(now, '') === rowsOf(last, '') ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

/** Each table's writes between two readings, per message, rounded; tables that wrote nothing left out. */
export function perMessageByTable(before: Counts, after: Counts, messages: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after.byTable)
      .map(([t, n]) => [t, Number(((n - (before.byTable[t] ?? 0)) / messages).toFixed(2))] as const)
      .filter(([, n]) => n > 0),
  );
}

/** Whether every one of the job's `recipients` has its delivered and read receipts folded into its report. */
export async function receiptsFolded(db: pg.Client, jobId: string, recipients: number): Promise<boolean> {
  const r = await db.query<{ d: number; r: number }>(
    'SELECT delivered AS d, read AS r FROM jobs.job_receipts WHERE job_id = $1',
    [jobId],
  );
  return r.rows[0]?.d === recipients && r.rows[0]?.r === recipients;
}
