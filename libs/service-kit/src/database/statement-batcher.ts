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
  /** Until when (`performance.now()`) it may wait for others to join its statement; 0 = not at all. */
  until: number;
}

export interface RunOptions {
  /**
   * How long this item may wait for others to join its statement, when a slot is free (default 0: it
   * runs on the next turn of the event loop). A statement starts once one of its items may wait no
   * longer or `maxBatch` are queued, and takes along every item queued by then. For work that is
   * prepared ahead of when it is needed (a lane's step, taken before its slot), so at low rates many
   * share one statement instead of each paying its own round trip, commit and planning.
   */
  waitMs?: number;
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
  /** The timer of a statement held for its items to gather, and when it fires (`performance.now()`). */
  private gathering?: { timer: NodeJS.Timeout; at: number };

  constructor(
    private readonly statement: BatchedStatement<I, O>,
    private readonly options: StatementBatcherOptions,
  ) {}

  run(item: I, options: RunOptions = {}): Promise<O> {
    // maxBatch 1: no queue; the pool alone bounds how many run at once.
    if (this.options.maxBatch <= 1) {
      return this.one(item).then((out) => {
        this.report(1, false);
        return out;
      });
    }
    const waitMs = options.waitMs ?? 0;
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject, until: waitMs > 0 ? performance.now() + waitMs : 0 });
      this.kick();
    });
  }

  /** Items that may still wait for company go now (the process is stopping: nothing is left to a timer). */
  hurry(): void {
    for (const w of this.queue) w.until = 0;
    this.kick();
  }

  /** Items waiting for a statement. */
  get waiting(): number {
    return this.queue.length;
  }

  private kick(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    // Items that may wait, fewer than a full statement: held until the first of them may wait no longer.
    const at = this.queue.length < this.options.maxBatch ? Math.min(...this.queue.map((w) => w.until)) : 0;
    if (at > performance.now()) {
      if (this.gathering && this.gathering.at <= at) return;
      if (this.gathering) clearTimeout(this.gathering.timer);
      this.gathering = {
        at,
        timer: setTimeout(
          () => {
            this.gathering = undefined;
            this.kick();
          },
          Math.ceil(at - performance.now()),
        ),
      };
      return;
    }
    if (this.gathering) {
      clearTimeout(this.gathering.timer);
      this.gathering = undefined;
    }
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
