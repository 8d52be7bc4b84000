import type { EntityManager } from 'typeorm';
import type { Transactions } from './transaction.js';
import { StatementBatcher, type StatementBatcherOptions } from './statement-batcher.js';

/** What the works of one batched transaction share. */
export interface Batch {
  /**
   * Runs `fn` once for the whole batch (the first registration of `key` wins), after every work and
   * before the commit — e.g. one multi-row insert of what all the works wrote down.
   */
  atEnd(key: string, fn: (em: EntityManager) => Promise<void>): void;
}

export type BatchWork<T> = (em: EntityManager, batch: Batch) => Promise<T>;

/** Per transaction: `maxBatch` works at most, `maxInFlight` transactions at once (each holds a pooled connection). */
export type TransactionBatcherOptions = StatementBatcherOptions;

class BatchScope implements Batch {
  private readonly ends = new Map<string, (em: EntityManager) => Promise<void>>();

  atEnd(key: string, fn: (em: EntityManager) => Promise<void>): void {
    if (!this.ends.has(key)) this.ends.set(key, fn);
  }

  async end(em: EntityManager): Promise<void> {
    // An end may register another (it runs too, once).
    const done = new Set<string>();
    for (let pending = [...this.ends.keys()]; pending.length > 0; pending = [...this.ends.keys()].filter((k) => !done.has(k))) {
      for (const key of pending) {
        done.add(key);
        await this.ends.get(key)!(em);
      }
    }
  }
}

/**
 * Runs independent units of work that arrive at about the same time in one transaction: one BEGIN and
 * one COMMIT (one WAL flush) for many, instead of one each. A unit waits for nothing when the queue is
 * quiet (it runs on the next turn of the event loop, in a transaction of its own while fewer than
 * `maxInFlight` are busy); under load, units that arrive while every transaction is busy go together
 * into the next ones, spread evenly over them.
 *
 * Measured on 2 cores: before the jobs service prepared a lane's step ahead of its slot, batching
 * paced worse (units in one transaction run their statements one after another on one connection);
 * with the step taken JOBS_SEND_LEAD_MS ahead, batches of up to 50 paced as well as a transaction per
 * step (jobs-pacing, 1,000 accounts at 4 s: median 9 ms, p99 38 ms) and cut the jobs service's commits
 * per message from 1.4 to 0.4 at delay 0 (jobs-throughput). `maxBatch` 1 skips the queue altogether.
 *
 * All or nothing per batch, but never one unit's fault for the others: when a batch fails (one unit
 * threw, a deadlock, a lost connection), nothing of it was committed and each unit runs again alone,
 * in its own transaction, and settles with its own result. So a unit must only touch the database
 * through `em` (and the batch's `atEnd`) until its transaction is over: it may run twice.
 */
export class TransactionBatcher {
  /** The queue and its policy are StatementBatcher's: a batch is one transaction, a unit alone is its own. */
  private readonly batcher: StatementBatcher<BatchWork<unknown>, unknown>;

  constructor(tx: Pick<Transactions, 'run'>, options: TransactionBatcherOptions) {
    const together = (works: BatchWork<unknown>[]) =>
      tx.run((em) =>
        inScope(em, async (scope) => {
          const out: unknown[] = [];
          for (const work of works) out.push(await work(em, scope));
          return out;
        }),
      );
    const alone = (work: BatchWork<unknown>) => tx.run((em) => inScope(em, (scope) => work(em, scope)));
    this.batcher = new StatementBatcher({ many: together, one: alone }, options);
  }

  run<T>(work: BatchWork<T>): Promise<T> {
    return this.batcher.run(work) as Promise<T>;
  }

  /** Units waiting for a transaction. */
  get waiting(): number {
    return this.batcher.waiting;
  }
}

/** Runs `fn` with a fresh batch scope, then the scope's end-of-batch work, on `em`. */
async function inScope<T>(em: EntityManager, fn: (scope: BatchScope) => Promise<T>): Promise<T> {
  const scope = new BatchScope();
  const out = await fn(scope);
  await scope.end(em);
  return out;
}
