import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { CollectionSoon, fullCollection } from '../memory/full-collection.js';

describe('CollectionSoon: one full collection after a burst of work', () => {
  afterEach(() => jest.useRealTimers());

  it('runs once the requests stop for the quiet time, and never twice within the interval', () => {
    jest.useFakeTimers();
    let now = 0;
    let runs = 0;
    const took: number[] = [];
    const soon = new CollectionSoon(
      () => void runs++,
      { quietMs: 100, intervalMs: 1000 },
      (ms) => took.push(ms),
      () => now,
    );
    soon.request();
    jest.advanceTimersByTime(99);
    soon.request(); // the burst goes on: the quiet time starts again
    jest.advanceTimersByTime(99);
    expect(runs).toBe(0);
    jest.advanceTimersByTime(1);
    expect([runs, soon.pending, took]).toEqual([1, false, [0]]);
    now = 200;
    soon.request();
    jest.advanceTimersByTime(100);
    expect(runs).toBe(1); // within the interval of the last one
    jest.advanceTimersByTime(699);
    expect(runs).toBe(1);
    jest.advanceTimersByTime(1);
    expect(runs).toBe(2);
    soon.request();
    soon.stop();
    jest.advanceTimersByTime(10_000);
    expect(runs).toBe(2);
  });

  it("V8's own full collection is there to call", () => {
    const gc = fullCollection();
    expect(typeof gc).toBe('function');
    gc!();
  });
});
