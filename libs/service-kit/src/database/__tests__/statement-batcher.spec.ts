import { describe, expect, it } from '@jest/globals';
import { StatementBatcher, type BatchedStatement, type StatementBatcherOptions } from '../statement-batcher.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
async function waitUntil(ok: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!ok()) {
    if (performance.now() > end) throw new Error('timed out');
    await sleep(1);
  }
}

/**
 * A statement whose runs the test finishes by hand: each call (one or many) waits until `finish`
 * settles it. Answers are the item times ten; items listed in `bad` make the statement fail.
 */
function manualStatement(bad: ReadonlySet<number> = new Set()) {
  const calls: { items: number[]; kind: 'one' | 'many'; done: () => void }[] = [];
  let running = 0;
  let maxRunning = 0;
  const run = (kind: 'one' | 'many', items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      calls.push({
        items,
        kind,
        done: () => {
          running--;
          if (items.some((i) => bad.has(i))) reject(new Error(`bad item in ${items.join(',')}`));
          else resolve(items.map((i) => i * 10));
        },
      });
    });
  const statement: BatchedStatement<number, number> = {
    many: (items) => run('many', items),
    one: async (item) => (await run('one', [item]))[0]!,
  };
  return {
    statement,
    calls,
    maxRunning: () => maxRunning,
    /** Finishes every statement started so far, then lets the batcher start the next ones. */
    async finishAll() {
      for (const c of calls.splice(0)) c.done();
      for (let i = 0; i < 3; i++) await turn();
    },
  };
}

function batcher(s: BatchedStatement<number, number>, options: Omit<StatementBatcherOptions, 'onBatch'>) {
  const batches: [number, boolean][] = [];
  return { b: new StatementBatcher(s, { ...options, onBatch: (n, alone) => batches.push([n, alone]) }), batches };
}

describe('StatementBatcher', () => {
  it('runs a lone call at once, alone, on the next turn (no timer)', async () => {
    const s = manualStatement();
    const { b, batches } = batcher(s.statement, { maxBatch: 100, maxInFlight: 2 });
    const answer = b.run(7);
    await turn();
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([['one', [7]]]);
    await s.finishAll();
    expect(await answer).toBe(70);
    expect(batches).toEqual([[1, false]]);
  });

  it('calls made while every slot is busy go together in one statement, each caller getting its own answer in order', async () => {
    const s = manualStatement();
    const { b, batches } = batcher(s.statement, { maxBatch: 100, maxInFlight: 1 });
    const first = b.run(1);
    await turn();
    const rest = [2, 3, 4, 5, 6].map((i) => b.run(i));
    await turn();
    expect(b.waiting).toBe(5);
    expect(s.calls.map((c) => c.items)).toEqual([[1]]);
    await s.finishAll();
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([['many', [2, 3, 4, 5, 6]]]);
    await s.finishAll();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50, 60]);
    expect(batches).toEqual([
      [1, false],
      [5, false],
    ]);
  });

  it('spreads calls of one turn over the free slots: alone while there is room, together beyond', async () => {
    const s = manualStatement();
    const { b } = batcher(s.statement, { maxBatch: 100, maxInFlight: 3 });
    const two = [1, 2].map((i) => b.run(i));
    await turn();
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([
      ['one', [1]],
      ['one', [2]],
    ]);
    await s.finishAll();
    expect(await Promise.all(two)).toEqual([10, 20]);

    const nine = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => b.run(i));
    await turn();
    expect(s.calls.map((c) => c.items)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ]);
    await s.finishAll();
    expect(await Promise.all(nine)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  it('greedy: the first free slot takes every waiting call up to maxBatch, the next slot the rest', async () => {
    const s = manualStatement();
    const { b } = batcher(s.statement, { maxBatch: 4, maxInFlight: 3, fill: 'greedy' });
    const one = b.run(1);
    await turn();
    // Alone while nothing else waits: no waiting for company.
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([['one', [1]]]);
    const six = [2, 3, 4, 5, 6, 7].map((i) => b.run(i));
    await turn();
    expect(s.calls.map((c) => c.items)).toEqual([[1], [2, 3, 4, 5], [6, 7]]);
    await s.finishAll();
    expect(await Promise.all([one, ...six])).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it('a call that may wait holds a free slot until its wait is over, and takes along whatever came meanwhile', async () => {
    const s = manualStatement();
    const { b, batches } = batcher(s.statement, { maxBatch: 10, maxInFlight: 2, fill: 'greedy' });
    const t0 = performance.now();
    const first = b.run(1, { waitMs: 300 });
    await sleep(10);
    const second = b.run(2, { waitMs: 2000 });
    await sleep(10);
    // Both slots are free, and yet nothing ran: the first may still wait.
    expect(s.calls).toEqual([]);
    await waitUntil(() => s.calls.length > 0);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(299);
    // The first one's wait decides; the second goes along although it could have waited longer.
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([['many', [1, 2]]]);
    await s.finishAll();
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(batches).toEqual([[2, false]]);
  });

  /** Calls 1 and 2 that may wait `waitMs`, on a greedy batcher with two slots free: held, nothing run yet. */
  async function held(maxBatch: number, waitMs: number) {
    const s = manualStatement();
    const { b } = batcher(s.statement, { maxBatch, maxInFlight: 2, fill: 'greedy' });
    const waiting = [1, 2].map((i) => b.run(i, { waitMs }));
    await sleep(5);
    expect(s.calls).toEqual([]);
    return { s, b, waiting };
  }

  it('hurry: calls that may still wait go at once, together (a stop leaves nothing to a timer)', async () => {
    const { s, b, waiting } = await held(10, 60_000);
    b.hurry();
    await turn();
    expect(s.calls.map((c) => c.items)).toEqual([[1, 2]]);
    await s.finishAll();
    expect(await Promise.all(waiting)).toEqual([10, 20]);
  });

  it('a call that may not wait starts at once, taking the waiting ones along; so does a full batch', async () => {
    const { s, b, waiting } = await held(3, 5000);
    const urgent = b.run(3);
    await turn();
    expect(s.calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    await s.finishAll();
    expect(await Promise.all([...waiting, urgent])).toEqual([10, 20, 30]);

    // maxBatch items that may all wait: no reason to wait any longer.
    const full = [4, 5, 6].map((i) => b.run(i, { waitMs: 5000 }));
    await turn();
    expect(s.calls.map((c) => c.items)).toEqual([[4, 5, 6]]);
    await s.finishAll();
    expect(await Promise.all(full)).toEqual([40, 50, 60]);
  });

  it('never runs more than maxInFlight statements, nor more than maxBatch items in one', async () => {
    const s = manualStatement();
    const { b, batches } = batcher(s.statement, { maxBatch: 10, maxInFlight: 2 });
    const all: Promise<number>[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20; i++) all.push(b.run(round * 20 + i));
      await turn();
      expect(s.calls.length).toBeLessThanOrEqual(2);
      await s.finishAll();
    }
    while (b.waiting > 0 || s.calls.length > 0) await s.finishAll();
    expect(await Promise.all(all)).toEqual(Array.from({ length: 100 }, (_, i) => i * 10));
    expect(s.maxRunning()).toBe(2);
    expect(Math.max(...batches.map(([n]) => n))).toBe(10);
    expect(batches.reduce((sum, [n]) => sum + n, 0)).toBe(100);
    expect(batches.length).toBeLessThan(100);
  });

  it('a failed batch runs each item alone: only the bad item fails, the others get their answers', async () => {
    const s = manualStatement(new Set([3]));
    const { b, batches } = batcher(s.statement, { maxBatch: 100, maxInFlight: 1 });
    const first = b.run(0);
    await turn();
    const rest = Promise.allSettled([1, 2, 3, 4].map((i) => b.run(i)));
    await s.finishAll(); // the lone first
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([['many', [1, 2, 3, 4]]]);
    await s.finishAll(); // the batch fails; each item runs alone
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([
      ['one', [1]],
      ['one', [2]],
      ['one', [3]],
      ['one', [4]],
    ]);
    await s.finishAll();
    const settled = await rest;
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      10,
      20,
      'bad item in 3',
      40,
    ]);
    expect(await first).toBe(0);
    expect(batches).toEqual([
      [1, false],
      [4, true],
    ]);
  });

  it('a lone call that fails rejects its caller only, and the batcher goes on', async () => {
    const s = manualStatement(new Set([5]));
    const { b } = batcher(s.statement, { maxBatch: 100, maxInFlight: 1 });
    const bad = b.run(5);
    await turn();
    await s.finishAll();
    await expect(bad).rejects.toThrow('bad item in 5');
    const good = b.run(6);
    await turn();
    await s.finishAll();
    expect(await good).toBe(60);
  });

  it('rejects every caller when `many` answers the wrong number of results (no second write)', async () => {
    let ones = 0;
    const b = new StatementBatcher<number, number>(
      {
        many: async (items) => items.slice(1),
        one: async (item) => {
          ones++;
          await turn();
          return item;
        },
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const first = b.run(0);
    await turn();
    const rest = Promise.allSettled([1, 2, 3].map((i) => b.run(i)));
    expect(await first).toBe(0);
    for (const r of await rest) expect(r.status).toBe('rejected');
    expect(ones).toBe(1);
  });

  it('maxBatch 1: every call its own statement at once, never `many`', async () => {
    const s = manualStatement();
    const { b, batches } = batcher(s.statement, { maxBatch: 1, maxInFlight: 1 });
    const all = [1, 2, 3].map((i) => b.run(i));
    expect(s.calls.map((c) => [c.kind, c.items])).toEqual([
      ['one', [1]],
      ['one', [2]],
      ['one', [3]],
    ]);
    await s.finishAll();
    expect(await Promise.all(all)).toEqual([10, 20, 30]);
    expect(batches).toEqual([
      [1, false],
      [1, false],
      [1, false],
    ]);
  });

  it('a `one` that throws at once rejects its caller instead of breaking the queue', async () => {
    const b = new StatementBatcher<number, number>(
      {
        many: async (items) => items,
        one: (item) => {
          if (item === 1) throw new Error('sync');
          return Promise.resolve(item);
        },
      },
      { maxBatch: 10, maxInFlight: 2 },
    );
    await expect(b.run(1)).rejects.toThrow('sync');
    expect(await b.run(2)).toBe(2);
  });
});
