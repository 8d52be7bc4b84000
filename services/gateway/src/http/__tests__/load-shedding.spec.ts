import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import express, { type Response } from 'express';
import { CommonErrorCode, MESSAGES } from '@bns/contracts';
import { LoadShedder } from '../load-shedding.js';

/** A GET answered as `raw` headers, status and body; `onRequest` sees the request leave. */
function get(port: number, path: string, onRequest?: (req: ReturnType<typeof request>) => void) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request({ port, path, host: '127.0.0.1' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
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
  async function app(maxInFlight: number) {
    shedder = new LoadShedder(maxInFlight, 10_000);
    const held: Response[] = [];
    const a = express();
    a.use(shedder.middleware);
    a.get('/hold', (_req, res) => void held.push(res));
    a.get('/quick', (_req, res) => void res.json({ ok: true }));
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
    expect(JSON.parse(refused.body)).toEqual({ success: false, error: MESSAGES.overloaded, code: CommonErrorCode.Overloaded });
    expect(shedder!.shed).toBe(1);

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
});
