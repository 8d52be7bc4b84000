import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryReturn, RETURN_AFTER_CLOSED_MIN, RETURN_TIMING } from '../memory-return.js';

const RETURN_QUIET_MS = RETURN_TIMING.quietMs;
const RETURN_INTERVAL_MS = RETURN_TIMING.intervalMs;

describe('MemoryReturn: a full collection after a wave of closed sockets', () => {
  let now = 0;
  let collections = 0;
  let memory: MemoryReturn;
  const make = () =>
    new MemoryReturn(
      () => void collections++,
      () => now,
    );
  const open = (n: number) => {
    for (let i = 0; i < n; i++) memory.opened();
  };
  const close = (n: number) => {
    for (let i = 0; i < n; i++) memory.closed();
  };

  afterEach(() => {
    memory.stop();
    jest.useRealTimers();
    collections = 0;
    now = 0;
  });

  it('collects once, after the closes stop for the quiet time, when a quarter (and 100 at least) closed', () => {
    jest.useFakeTimers();
    memory = make();
    open(2000);
    close(499);
    expect(memory.pending).toBe(false);
    close(1);
    expect(memory.pending).toBe(true);
    jest.advanceTimersByTime(RETURN_QUIET_MS - 1);
    close(1000); // more closes push it back
    jest.advanceTimersByTime(RETURN_QUIET_MS - 1);
    expect(collections).toBe(0);
    jest.advanceTimersByTime(1);
    expect(collections).toBe(1);
    expect(memory.pending).toBe(false);
  });

  it('never for a few closes, nor for a replica that keeps its sockets', () => {
    jest.useFakeTimers();
    memory = make();
    open(200);
    close(RETURN_AFTER_CLOSED_MIN - 1);
    open(RETURN_AFTER_CLOSED_MIN - 1);
    close(RETURN_AFTER_CLOSED_MIN - 1);
    jest.advanceTimersByTime(10 * RETURN_INTERVAL_MS);
    expect(collections).toBe(0);
  });

  it('at most one collection per interval; the count starts again from what is open after one', () => {
    jest.useFakeTimers();
    memory = make();
    open(1000);
    close(500);
    memory.run();
    expect(collections).toBe(1);
    now = 1000;
    open(500);
    close(500);
    expect(memory.pending).toBe(true);
    jest.advanceTimersByTime(RETURN_QUIET_MS);
    expect(collections).toBe(1);
    jest.advanceTimersByTime(RETURN_INTERVAL_MS - 1000 - RETURN_QUIET_MS);
    expect(collections).toBe(2);
  });
});
