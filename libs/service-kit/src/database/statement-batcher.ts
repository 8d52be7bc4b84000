/** One statement in two forms: for one item, and for many at once (one multi-row statement). */
export interface BatchedStatement<I, O> {
  /** Writes all `items` in one statement; its answers in the same order. */
  many(items: I[]): Promise<O[]>;
  /** Writes one item alone. */
  one(item: I): Promise<O>;
}

export interface StatementBatcherOptions {
  /** Most items in one statement; 1 = every item its own statement, at once. */
  maxBatch: number;
  /** Statements in flight at once (each holds one pooled connection while it runs). */
  maxInFlight: number;
  /**
   * How the waiting items go to the free slots: `spread` (the default) evenly over them, so each
   * statement stays small; `greedy` as many as `maxBatch` into the first free one, the rest to the
   * next, so under load fewer, bigger statements run (a batch whose cost hardly grows with its size:
   * lane steps that share their statements, `Batch.gather`).
   */
  fill?: 'spread' | 'greedy';
  /** Called after each statement: how many items it held, and whether they ran one by one after it failed. */
  onBatch?: (size: number, alone: boolean) => void;
}

interface Waiter<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for autocommit statements: items that arrive while every statement slot is busy are
 * written by one multi-row statement (one commit, one round trip for many), and each caller gets its
 * own answer. A call never waits for a timer: it runs on the next turn of the event loop, alone while
 * fewer than `maxInFlight` statements are running; the items queued meanwhile are spread over the
 * slots that free up. TransactionBatcher queues its units of work through it too (a batch is then one
 * transaction).
 *
 * A failed `many` must have written nothing (one statement, or one transaction, rolled back), so each
 * of its items then runs alone through `one`, and a bad item fails only its own caller. `many` must
 * therefore be safe to follow by `one` of the same items.
 */
export class StatementBatcher<I, O> {
  private queue: Waiter<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly statement: BatchedStatement<I, O>,
    private readonly options: StatementBatcherOptions,
  ) {}

  run(item: I): Promise<O> {
    // maxBatch 1: no queue; the pool alone bounds how many run at once.
    if (this.options.maxBatch <= 1) {
      return this.one(item).then((out) => {
        this.report(1, false);
        return out;
      });
    }
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.kick();
    });
  }

  /** Items waiting for a statement. */
  get waiting(): number {
    return this.queue.length;
  }

  private kick(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // Calls made in this turn (answers that came in one socket read) join.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const free = this.options.maxInFlight - this.inFlight;
      const share = this.options.fill === 'greedy' ? this.queue.length : Math.ceil(this.queue.length / free);
      const take = Math.max(1, Math.min(this.options.maxBatch, share));
      const batch = this.queue.splice(0, take);
      this.inFlight++;
      void this.runBatch(batch).finally(() => {
        this.inFlight--;
        this.kick();
      });
    }
  }

  /** Settles every waiter of `batch`; never rejects. */
  private async runBatch(batch: Waiter<I, O>[]): Promise<void> {
    if (batch.length === 1) return this.runAlone(batch[0]!, false);
    let results: O[];
    try {
      results = await this.statement.many(batch.map((w) => w.item));
    } catch {
      this.report(batch.length, true);
      await Promise.all(batch.map((w) => this.runAlone(w, true)));
      return;
    }
    if (results.length !== batch.length) {
      // A bug in `many`: it may have written, so running the items again could write twice.
      const err = new Error(`batched statement answered ${results.length} results for ${batch.length} items`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
    this.report(batch.length, false);
  }

  private async runAlone(waiter: Waiter<I, O>, retried: boolean): Promise<void> {
    let out: O;
    try {
      out = await this.one(waiter.item);
    } catch (err) {
      waiter.reject(err);
      return;
    }
    waiter.resolve(out);
    if (!retried) this.report(1, false);
  }

  /** `one` as a promise, also when it throws at once. */
  private async one(item: I): Promise<O> {
    return this.statement.one(item);
  }

  private report(size: number, alone: boolean): void {
    try {
      this.options.onBatch?.(size, alone);
    } catch {
      // A metrics hook must not break the callers.
    }
  }
}
