import { CollectionSoon, type CollectionSoonOptions } from '@bns/service-kit';

/** Sockets that must have closed since the last collection, at least, before one is asked for. */
export const RETURN_AFTER_CLOSED_MIN = 100;
/** ... and at least this share of the most that were open since then. */
export const RETURN_AFTER_CLOSED_SHARE = 0.25;
/** The collection waits until no socket closed for this long (a wave of closes ends first), and runs at most once a minute. */
export const RETURN_TIMING: CollectionSoonOptions = { quietMs: 5_000, intervalMs: 60_000 };

/**
 * Gives memory back after many sockets closed. Measured: 2,000 sockets closed left the gateway 36%
 * above its RSS before them 30 s later; one full collection took it below that (docs/benchmarks.md,
 * realtime-progress). Once RETURN_AFTER_CLOSED_SHARE of the most sockets open since the last
 * collection (and RETURN_AFTER_CLOSED_MIN at least) have closed, one full collection runs when the
 * closes stop (RETURN_TIMING). A replica that keeps its sockets never collects on their account.
 */
export class MemoryReturn {
  private peak = 0;
  private open = 0;
  private readonly soon: CollectionSoon;

  constructor(collect: () => void, now?: () => number, onCollected?: (tookMs: number) => void) {
    this.soon = new CollectionSoon(
      () => {
        collect();
        this.peak = this.open;
      },
      RETURN_TIMING,
      onCollected,
      now,
    );
  }

  opened(): void {
    this.open++;
    if (this.open > this.peak) this.peak = this.open;
  }

  closed(): void {
    this.open = Math.max(0, this.open - 1);
    const dropped = this.peak - this.open;
    if (dropped >= Math.max(RETURN_AFTER_CLOSED_MIN, this.peak * RETURN_AFTER_CLOSED_SHARE)) this.soon.request();
  }

  /** Runs the collection now (the timer's work). */
  run(): void {
    this.soon.run();
  }

  get pending(): boolean {
    return this.soon.pending;
  }

  stop(): void {
    this.soon.stop();
  }
}
