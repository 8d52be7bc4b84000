import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Sockets that must have closed since the last collection, at least, before one is asked for. */
export const RETURN_AFTER_CLOSED_MIN = 100;
/** ... and at least this share of the most that were open since then. */
export const RETURN_AFTER_CLOSED_SHARE = 0.25;
/** The collection waits until no socket closed for this long (a wave of closes ends first). */
export const RETURN_QUIET_MS = 5_000;
/** At most one collection this often. */
export const RETURN_INTERVAL_MS = 60_000;

/**
 * A full garbage collection on demand. An idle Node process rarely runs one (V8 collects as a process
 * allocates), so what a wave of closed sockets leaves stays in the heap, and in the RSS, until traffic
 * comes back. Measured: 2,000 sockets closed left the gateway 36% above its RSS before them 30 s later;
 * one full collection took it below that (docs/benchmarks.md, realtime-progress).
 */
export function fullCollection(): (() => void) | undefined {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}

/**
 * Gives memory back after many sockets closed: once RETURN_AFTER_CLOSED_SHARE of the most sockets open
 * since the last collection (and RETURN_AFTER_CLOSED_MIN at least) have closed, and then none closed
 * for RETURN_QUIET_MS, one full collection runs; at most one per RETURN_INTERVAL_MS. A replica that
 * keeps its sockets never collects on their account.
 */
export class MemoryReturn {
  private peak = 0;
  private open = 0;
  private timer?: NodeJS.Timeout;
  private lastAt = -Infinity;

  constructor(
    private readonly collect: () => void,
    private readonly now: () => number = () => performance.now(),
    private readonly onCollected?: (tookMs: number) => void,
  ) {}

  opened(): void {
    this.open++;
    if (this.open > this.peak) this.peak = this.open;
  }

  closed(): void {
    this.open = Math.max(0, this.open - 1);
    const dropped = this.peak - this.open;
    if (dropped < Math.max(RETURN_AFTER_CLOSED_MIN, this.peak * RETURN_AFTER_CLOSED_SHARE)) return;
    clearTimeout(this.timer);
    const due = Math.max(RETURN_QUIET_MS, this.lastAt + RETURN_INTERVAL_MS - this.now());
    this.timer = setTimeout(() => this.run(), due);
    this.timer.unref();
  }

  /** Runs the collection now (the timer's work). */
  run(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const started = this.now();
    this.collect();
    this.lastAt = this.now();
    this.peak = this.open;
    this.onCollected?.(this.lastAt - started);
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
