import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection on demand, or undefined where V8 gives none. An idle Node process rarely
 * runs one (V8 collects as a process allocates), so what a burst of work leaves (a wave of closed
 * sockets, a 50,000-row start) stays in the heap, and in the RSS, until traffic comes back.
 */
export function fullCollection(): (() => void) | undefined {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}

export interface CollectionSoonOptions {
  /** The collection waits until nothing asked for one for this long (a burst of work ends first). */
  quietMs: number;
  /** At most one collection this often. */
  intervalMs: number;
}

/**
 * One full collection after a burst of work that left much garbage: `request` (again and again as the
 * burst goes on) runs `collect` once `quietMs` passed without another request, and never twice within
 * `intervalMs`. A collection of a few hundred MiB pauses the process for a moment, so it waits for quiet.
 */
export class CollectionSoon {
  private timer?: NodeJS.Timeout;
  private lastAt = -Infinity;

  constructor(
    private readonly collect: () => void,
    private readonly options: CollectionSoonOptions,
    private readonly onCollected?: (tookMs: number) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  request(): void {
    clearTimeout(this.timer);
    const due = Math.max(this.options.quietMs, this.lastAt + this.options.intervalMs - this.now());
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
