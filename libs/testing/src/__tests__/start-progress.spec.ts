import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { freePort, ManagedProcess, MOVING_CPU_MS, StartProgress } from '../process.js';
import { waitForStart } from '../services.js';

/** A child `node -e <code>`, stopped after each test. */
const children: ManagedProcess[] = [];
const node = (code: string) => {
  const p = ManagedProcess.spawn('child', process.execPath, ['-e', code]);
  children.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(children.splice(0).map((p) => p.kill9()));
});

describe('StartProgress: the launcher waits for a start that moves, not for a fixed time', () => {
  const quiet = { outputBytes: 0, cpuMs: 50, listening: false };

  it('a process with no output, no CPU and no port is silent once the window has passed', () => {
    const p = new StartProgress(30_000, 0);
    expect(p.observe(quiet, 0)).toBe(true);
    expect(p.observe(quiet, 29_999)).toBe(true);
    expect(p.observe({ ...quiet, cpuMs: 50 + MOVING_CPU_MS - 10 }, 30_000)).toBe(false);
    expect(p.silentFor(30_000)).toBe(30_000);
  });

  it('output, CPU or a port that answers each start the window again', () => {
    const p = new StartProgress(30_000, 0);
    p.observe(quiet, 0);
    expect(p.observe({ ...quiet, outputBytes: 120 }, 25_000)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120 }, 54_000)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120, cpuMs: 50 + MOVING_CPU_MS }, 54_500)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120, cpuMs: 50 + MOVING_CPU_MS }, 84_000)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120, cpuMs: 50 + MOVING_CPU_MS, listening: true }, 100_000)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120, cpuMs: 50 + MOVING_CPU_MS }, 129_000)).toBe(true);
    expect(p.observe({ ...quiet, outputBytes: 120, cpuMs: 50 + MOVING_CPU_MS }, 130_000)).toBe(false);
  });

  it('CPU counts only once it adds up to MOVING_CPU_MS since the last move (a reconnect timer is not progress)', () => {
    const p = new StartProgress(30_000, 0);
    p.observe(quiet, 0);
    for (let t = 1000, cpu = 50; t <= 30_000; t += 1000, cpu += 5) {
      if (!p.observe({ ...quiet, cpuMs: cpu }, t)) return expect(t).toBe(30_000);
    }
    throw new Error('5 ms of CPU a second kept it moving');
  });
});

describe('waitForStart with the progress rule, on real processes', () => {
  const servers: Server[] = [];
  afterEach(() => servers.splice(0).forEach((s) => s.close()));
  const closedPortUrl = async () => `http://127.0.0.1:${await freePort()}/healthz`;

  it('gives up on a silent process after the silence window, not the overall limit', async () => {
    const started = Date.now();
    const proc = node('setInterval(() => {}, 1000)');
    expect(await waitForStart(proc, await closedPortUrl(), { timeoutMs: 60_000, silenceMs: 1500 })).toBe('silent');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('keeps waiting past the silence window for a process that writes output', async () => {
    const started = Date.now();
    const proc = node("setInterval(() => console.log('migrating'), 200)");
    expect(await waitForStart(proc, await closedPortUrl(), { timeoutMs: 4000, silenceMs: 1500 })).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
  });

  it('keeps waiting past the silence window for a process that computes without a word', async () => {
    const proc = node('for (;;) {}');
    expect(await waitForStart(proc, await closedPortUrl(), { timeoutMs: 5000, silenceMs: 2500 })).toBe('timeout');
  });

  it('keeps waiting for a process whose port answers, not yet 200', async () => {
    const port = await freePort();
    const proc = node(
      `require('node:http').createServer((q, s) => s.writeHead(503).end()).listen(${port}, '127.0.0.1')`,
    );
    expect(await waitForStart(proc, `http://127.0.0.1:${port}/healthz`, { timeoutMs: 4000, silenceMs: 1500 })).toBe(
      'timeout',
    );
  });

  it('answers up at the first 200, and exited at once for a process that ends', async () => {
    const port = await freePort();
    const server = createServer((_q, s) => s.writeHead(200).end('ok'));
    servers.push(server);
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    expect(
      await waitForStart(node('setInterval(() => {}, 1000)'), `http://127.0.0.1:${port}/healthz`, {
        timeoutMs: 4000,
        silenceMs: 1500,
      }),
    ).toBe('up');
    const started = Date.now();
    expect(
      await waitForStart(node('process.exit(3)'), await closedPortUrl(), { timeoutMs: 60_000, silenceMs: 30_000 }),
    ).toBe('exited');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('without silenceMs, only the limit ends the wait', async () => {
    const started = Date.now();
    expect(await waitForStart(node('setInterval(() => {}, 1000)'), await closedPortUrl(), { timeoutMs: 3000 })).toBe(
      'timeout',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  });
});
