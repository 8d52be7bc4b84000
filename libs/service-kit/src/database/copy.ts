import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { QueryFailedError, type EntityManager } from 'typeorm';

/** A value of one column of a COPY row: text as it is, a number, or null (SQL NULL). */
export type CopyValue = string | number | null;

/** Rows per write to the stream: a 50,000-row COPY is never one 6 MB string. */
const ROWS_PER_WRITE = 1000;

/** COPY's text format: backslash, newline, carriage return and tab are escaped; NULL is `\N`. */
const SPECIAL = /[\\\n\r\t]/g;
/** The same set, not global: `test` keeps no state, and most text has none of them to replace. */
const HAS_SPECIAL = /[\\\n\r\t]/;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function field(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return HAS_SPECIAL.test(value) ? value.replace(SPECIAL, (ch) => ESCAPED[ch]!) : value;
}

/** The part of pg's client COPY needs: a query that is a stream. */
interface StreamingClient {
  query<T extends Writable>(stream: T): T;
}

/**
 * Inserts `count` rows into `table` with `COPY … FROM STDIN` on `em`'s transaction (which it must
 * have: the rows are part of its unit of work). `row(i)` gives the i-th row's values in `columns`'
 * order. Postgres reads COPY's text far faster than it unpacks array or JSON parameters of an
 * `INSERT … SELECT unnest(…)`, and the client sends plain text rather than escaping each array
 * element: the way to store tens of thousands of rows at once. Text must hold no NUL character (the
 * callers' checks refuse it). Errors are TypeORM's QueryFailedError, as for every other statement.
 */
export async function copyRows(
  em: EntityManager,
  table: string,
  columns: readonly string[],
  count: number,
  row: (i: number) => readonly CopyValue[],
): Promise<void> {
  const runner = em.queryRunner;
  if (!runner || runner.isReleased || !runner.isTransactionActive) throw new Error('copyRows needs a transaction');
  const client = (await runner.connect()) as StreamingClient;
  const sql = `COPY ${table} (${columns.join(', ')}) FROM STDIN`;
  const stream = client.query(copyFrom(sql));
  const done = new Promise<void>((resolve, reject) => {
    stream.once('finish', resolve);
    stream.once('error', reject);
  });
  // Never left unobserved: a failure before the end is awaited below.
  done.catch(() => undefined);
  try {
    for (let start = 0; start < count; start += ROWS_PER_WRITE) {
      let chunk = '';
      for (let i = start; i < Math.min(count, start + ROWS_PER_WRITE); i++) {
        const values = row(i);
        for (let c = 0; c < values.length; c++) chunk += (c === 0 ? '' : '\t') + field(values[c]!);
        chunk += '\n';
      }
      if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), done]);
    }
    stream.end();
    await done;
  } catch (err) {
    stream.destroy();
    throw new QueryFailedError(sql, [], err as Error);
  }
}
