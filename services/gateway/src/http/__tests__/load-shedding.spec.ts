import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import express, { type Response } from 'express';
import { CommonErrorCode, MESSAGES } from '@bns/contracts';
import {
  AdaptiveLimit,
  LoadShedder,
  SHED_MIN_SAMPLES,
  SHED_SUSTAIN_WINDOWS,
  SHED_WINDOW_MS,
} from '../load-shedding.js';

let callers = 0;

/**
 * A GET answered as `raw` headers, status and body; `onRequest` sees the request leave. Each call is
 * another caller (its own token) unless `caller` names one.
 */
function get(
  port: number,
  path: string,
  onRequest?: (req: ReturnType<typeof request>) => void,
  method = 'GET',
  caller = `caller-${++callers}`,
) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request(
      { port, path, host: '127.0.0.1', method, headers: { authorization: `Bearer ${caller}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
    onRequest?.(req);
  });
}

describe('LoadShedder', () => {
  let server: Server | undefined;
  let shedder: LoadShedder | undefined;
  afterEach(() => {
    server?.close();
    shedder?.stop();
  });

  /** An app whose /hold requests wait until released; `held` are their responses. */
  async function app(
    maxInFlight: number,
    reads: { max?: number; floor: number; targetMs: number } = { floor: 1, targetMs: 0 },
  ) {
    shedder = new LoadShedder({ maxInFlight, reads: { max: maxInFlight, ...reads }, maxLagMs: 10_000 });
    const held: Response[] = [];
    const a = express();
    a.use(shedder.middleware);
    a.get('/hold', (_req, res) => void held.push(res));
    a.get('/quick', (_req, res) => void res.json({ ok: true }));
    a.post('/write', (_req, res) => void res.json({ ok: true }));
    a.get('/metrics', (_req, res) => void res.type('text/plain').send('up 1'));
    server = a.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    return { port: (server.address() as AddressInfo).port, held, shedder };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };

  it('answers 503 + Retry-After with the overload envelope past the limit, and counts a request out when it is answered', async () => {
    const { port, held } = await app(1);
    const first = get(port, '/hold');
    await until(() => held.length === 1);
    const refused = await get(port, '/quick');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(refused.headers['content-length'])).toBe(Buffer.byteLength(refused.body));
    expect(JSON.parse(refused.body)).toEqual({
      success: false,
      error: MESSAGES.overloaded,
      code: CommonErrorCode.Overloaded,
    });
    expect(shedder!.shed).toBe(1);
    // A metric scrape is never shed: what an overloaded replica says about itself matters most then.
    expect((await get(port, '/metrics')).status).toBe(200);

    held[0]!.json({ released: true });
    expect((await first).status).toBe(200);
    await until(() => shedder!.current.inFlight === 0);
    expect((await get(port, '/quick')).status).toBe(200);
    expect(shedder!.current.inFlight).toBe(0);
  });

  it('counts a request out when its client goes away before the answer', async () => {
    const { port, held } = await app(1);
    let sent: ReturnType<typeof request> | undefined;
    const gone = get(port, '/hold', (req) => (sent = req)).catch(() => 'aborted');
    await until(() => held.length === 1);
    expect(shedder!.current.inFlight).toBe(1);
    sent!.destroy();
    expect(await gone).toBe('aborted');
    await until(() => shedder!.current.inFlight === 0);
    expect((await get(port, '/quick')).status).toBe(200);
  });

  it("cuts the reads' limit when the backends queue every request past the target, and refuses reads past it long before SHED_MAX_IN_FLIGHT (not writes)", async () => {
    const { port, held } = await app(512, { floor: 4, targetMs: 50 });
    const first = Array.from({ length: 10 }, () => get(port, '/hold'));
    await until(() => held.length === 10);
    // Every round trip of a window took 200 ms: a standing queue behind the gateway.
    const before = shedder!.current.readLimit;
    expect(before).toBe(512);
    await until(() => {
      for (let i = 0; i < SHED_MIN_SAMPLES; i++) shedder!.roundTrip(200);
      return shedder!.current.readLimit < before;
    });
    // 50% of the 10 in progress (200 ms is 4× the target; a window cuts by half at most); 6 if the
    // next window already grew it by one.
    expect(shedder!.current.readLimit).toBeGreaterThanOrEqual(5);
    expect(shedder!.current.readLimit).toBeLessThanOrEqual(6);
    const refused = await get(port, '/quick');
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ code: CommonErrorCode.Overloaded });
    // A write is what a user just asked for: it waits its turn up to SHED_MAX_IN_FLIGHT.
    expect((await get(port, '/write', undefined, 'POST')).status).toBe(200);
    for (const res of held.splice(0)) res.json({ released: true });
    expect((await Promise.all(first)).every((r) => r.status === 200)).toBe(true);
    // Fast round trips again: the limit grows back, and requests are admitted.
    await until(() => {
      for (let i = 0; i < SHED_MIN_SAMPLES; i++) shedder!.roundTrip(2);
      return shedder!.current.readLimit > 10;
    });
    expect((await get(port, '/quick')).status).toBe(200);
  });

  it('a read answered from memory (no service behind the gateway) meets only the hard bound, not the limit the backends cut', async () => {
    const { port, held } = await app(20, { floor: 4, targetMs: 50 });
    shedder!.answersFromMemory((req) => req.headers['x-from-memory'] === '1');
    /** A GET of `path`, marked as one the replica answers from memory or not. */
    const ask = (path: string, fromMemory: boolean) =>
      new Promise<number>((resolve, reject) => {
        request(
          {
            port,
            path,
            host: '127.0.0.1',
            headers: { authorization: `Bearer caller-${++callers}`, ...(fromMemory ? { 'x-from-memory': '1' } : {}) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        )
          .on('error', reject)
          .end();
      });
    const first = Array.from({ length: 10 }, () => ask('/hold', false));
    await until(() => held.length === 10);
    await until(() => {
      for (let i = 0; i < SHED_MIN_SAMPLES; i++) shedder!.roundTrip(200);
      return shedder!.current.readLimit <= 6;
    });
    // Past the cut limit: a read that needs the backends is shed, one answered from memory is not.
    expect(await ask('/quick', false)).toBe(503);
    expect(await ask('/quick', true)).toBe(200);
    // Up to the hard bound (20 in progress) they are admitted; past it, refused too.
    const more = Array.from({ length: 10 }, () => ask('/hold', true));
    await until(() => held.length === 20);
    expect(await ask('/quick', true)).toBe(503);
    for (const res of held.splice(0)) res.json({ released: true });
    expect(await Promise.all([...first, ...more])).toEqual(Array(20).fill(200));
  });
});

describe('LoadShedder fairness', () => {
  let server: Server | undefined;
  let shedder: LoadShedder | undefined;
  afterEach(() => {
    server?.close();
    shedder?.stop();
  });

  it('refuses a caller over its share with 429 + Retry-After before anyone is shed, and keeps the rest for others', async () => {
    shedder = new LoadShedder({ maxInFlight: 100, reads: { max: 40, floor: 4, targetMs: 0 }, maxLagMs: 10_000 });
    const held: Response[] = [];
    const a = express();
    a.use(shedder.middleware);
    a.get('/hold', (_req, res) => void held.push(res));
    a.get('/quick', (_req, res) => void res.json({ ok: true }));
    server = a.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    const port = (server.address() as AddressInfo).port;

    // One caller sends 60 reads at once: a quarter of the read limit (10) is admitted, the rest get 429.
    const burst = Array.from({ length: 60 }, () => get(port, '/hold', undefined, 'GET', 'noisy'));
    for (let i = 0; i < 100 && held.length < 10; i++) await new Promise((r) => setTimeout(r, 5));
    const refused = await Promise.race([Promise.all(burst.slice(10)), new Promise((r) => setTimeout(r, 2000, 'held'))]);
    expect(refused).not.toBe('held');
    for (const r of refused as Awaited<(typeof burst)[number]>[]) {
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('1');
      expect(JSON.parse(r.body)).toEqual({
        success: false,
        error: MESSAGES.rateLimited,
        code: CommonErrorCode.RateLimited,
      });
    }
    expect(held).toHaveLength(10);
    expect(shedder.shed).toBe(0);
    // Everyone else is answered while the burst is in progress.
    const others = await Promise.all(
      Array.from({ length: 5 }, (_, i) => get(port, '/quick', undefined, 'GET', `quiet-${i}`)),
    );
    expect(others.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const res of held.splice(0)) res.json({ released: true });
    expect((await Promise.all(burst.slice(0, 10))).every((r) => r.status === 200)).toBe(true);
    // Memory per caller lasts only while it has requests in progress.
    for (let i = 0; i < 100 && shedder.callers > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(shedder.callers).toBe(0);
    expect((await get(port, '/quick', undefined, 'GET', 'noisy')).status).toBe(200);
  });
});

describe('LoadShedder under event-loop lag', () => {
  let server: Server | undefined;
  let shedder: LoadShedder | undefined;
  afterEach(() => {
    server?.close();
    shedder?.stop();
  });

  it('refuses the callers that already have a request in progress (429) and still answers the others', async () => {
    shedder = new LoadShedder({ maxInFlight: 100, reads: { max: 100, floor: 4, targetMs: 0 }, maxLagMs: 100 });
    const held: Response[] = [];
    const a = express();
    a.use(shedder.middleware);
    a.get('/hold', (_req, res) => void held.push(res));
    a.get('/quick', (_req, res) => void res.json({ ok: true }));
    server = a.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    const holding = get(port, '/hold', undefined, 'GET', 'noisy');
    for (let i = 0; i < 100 && held.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
    // Block the loop well past SHED_MAX_LAG_MS, then let the shedder's timer see it.
    const until = performance.now() + 1500;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 60));
    expect(shedder.current.lagMs).toBeGreaterThan(100);
    expect((await get(port, '/quick', undefined, 'GET', 'noisy')).status).toBe(429);
    expect((await get(port, '/quick', undefined, 'GET', 'quiet')).status).toBe(200);
    held[0]!.json({ released: true });
    expect((await holding).status).toBe(200);
  });
});

describe('AdaptiveLimit', () => {
  const window = (limit: AdaptiveLimit, ms: readonly number[], inFlight: number) => {
    for (const m of ms) limit.sample(m);
    limit.judge(inFlight);
    return limit.current;
  };
  const slow = Array.from({ length: SHED_MIN_SAMPLES }, () => 120);
  /** The windows that find a queue before it counts as one that stays: they hold the limit. */
  const holding = (limit: AdaptiveLimit, ms: readonly number[], inFlight: number) => {
    const before = limit.current;
    for (let i = 1; i < SHED_SUSTAIN_WINDOWS; i++) expect(window(limit, ms, inFlight)).toBe(before);
  };

  it('starts at the hard bound and, once a queue stayed SHED_SUSTAIN_WINDOWS windows, cuts what is in progress by target / fastest (50–80%) each window', () => {
    const limit = new AdaptiveLimit({ max: 512, floor: 32, targetMs: 50 });
    expect(limit.current).toBe(512);
    holding(limit, slow, 400);
    // 120 ms against 50: cut to 50/120 of it, but never more than half in one window.
    expect(window(limit, slow, 400)).toBe(200);
    // Cut from the limit when more are in progress than it admits (requests admitted before a cut).
    expect(window(limit, slow, 500)).toBe(100);
    // Just past the target: cut by a fifth at least.
    expect(
      window(
        limit,
        slow.map(() => 55),
        100,
      ),
    ).toBe(80);
    // 70 ms: 50/70 of it.
    expect(
      window(
        limit,
        slow.map(() => 70),
        80,
      ),
    ).toBe(57);
    // Never below the floor.
    for (let i = 0; i < 20; i++) window(limit, slow, 1000);
    expect(limit.current).toBe(32);
  });

  it('answers a queue of a moment: fewer windows in a row than SHED_SUSTAIN_WINDOWS hold the limit, and a window without one starts the count again', () => {
    const limit = new AdaptiveLimit({ max: 512, floor: 32, targetMs: 50 });
    holding(limit, slow, 400);
    expect(window(limit, [5, ...slow], 400)).toBe(512);
    holding(limit, slow, 400);
    expect(window(limit, slow, 400)).toBe(200);
  });

  it('is not cut by a window with one fast round trip, by too few round trips, or while no more than the floor are in progress', () => {
    const limit = new AdaptiveLimit({ max: 512, floor: 32, targetMs: 50 });
    holding(limit, slow, 400);
    window(limit, slow, 400);
    const cut = limit.current;
    // One round trip within the target: no standing queue (slow ones are slow work of their own).
    expect(window(limit, [...slow, 49], 300)).toBeGreaterThan(cut);
    const grown = limit.current;
    expect(window(limit, slow.slice(1), 300)).toBeGreaterThan(grown);
    const fewer = new AdaptiveLimit({ max: 512, floor: 32, targetMs: 50 });
    for (let i = 0; i < 2 * SHED_SUSTAIN_WINDOWS; i++) expect(window(fewer, slow, 32)).toBe(512);
    // target 0: a fixed bound.
    const fixed = new AdaptiveLimit({ max: 100, floor: 10, targetMs: 0 });
    for (let i = 0; i < 2 * SHED_SUSTAIN_WINDOWS; i++) expect(window(fixed, slow, 100)).toBe(100);
  });

  it('counts round trips still unanswered past the target as slow: a stalled backend cuts it by half a window, an answer within the target does not', () => {
    const limit = new AdaptiveLimit({ max: 512, floor: 32, targetMs: 50 });
    for (let i = 0; i < SHED_SUSTAIN_WINDOWS; i++) limit.judge(300, SHED_MIN_SAMPLES);
    expect(limit.current).toBe(150);
    // Too few waiting.
    limit.judge(300, SHED_MIN_SAMPLES - 1);
    expect(limit.current).toBeGreaterThan(150);
    const before = limit.current;
    // One answered within the target this window: no standing queue, however many wait.
    limit.sample(10);
    limit.judge(300, 100);
    const grown = limit.current;
    expect(grown).toBeGreaterThan(before);
    // Slow answers and waiting ones add up.
    for (let i = 0; i < SHED_SUSTAIN_WINDOWS; i++) {
      for (let j = 0; j < 5; j++) limit.sample(80);
      limit.judge(300, 5);
    }
    expect(limit.current).toBe(Math.floor(grown * (50 / 80)));
  });

  it('grows back 5% a window (at least one request) up to the hard bound', () => {
    const limit = new AdaptiveLimit({ max: 512, floor: 10, targetMs: 50 });
    for (let i = 0; i < 30; i++) window(limit, slow, 1000);
    expect(limit.current).toBe(10);
    expect(window(limit, [], 0)).toBe(11);
    expect(window(limit, [], 0)).toBe(12);
    const windows = Array.from({ length: 200 }, () => window(limit, [], 0));
    expect(windows.every((v, i) => i === 0 || v >= windows[i - 1]!)).toBe(true);
    expect(windows.at(-1)).toBe(512);
    // From the floor to the bound within 10 s of windows.
    expect(windows.findIndex((v) => v === 512) * SHED_WINDOW_MS).toBeLessThan(10_000);
  });

  it('keeps the floor within the hard bound', () => {
    const limit = new AdaptiveLimit({ max: 2, floor: 32, targetMs: 50 });
    for (let i = 0; i < SHED_SUSTAIN_WINDOWS; i++) window(limit, slow, 5);
    expect(limit.current).toBe(2);
  });
});
