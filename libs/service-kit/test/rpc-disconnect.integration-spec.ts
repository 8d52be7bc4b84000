import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNats, type Nats } from '@bns/testing';
import { connectNats } from '../src/nats/connection.js';
import { isRpcDisconnected, RPC_DISCONNECTED, RpcClient } from '../src/nats/rpc-client.js';

/**
 * A NATS restart loses the replies of requests in flight. They must fail at once with a code the
 * caller can tell apart from a real failure, not wait out RPC_TIMEOUT_MS.
 */
describe('RpcClient across a NATS restart', () => {
  const storeDir = mkdtempSync(join(tmpdir(), 'bns-rpc-nats-'));
  let nats: Nats;
  let client: NatsConnection;
  let responder: NatsConnection;
  let rpc: RpcClient;

  const startResponder = async (url: string) => {
    const nc = await connectNats(url, 'responder');
    // templates.ping answers at once; templates.stats never answers (a reply lost with the broker).
    nc.subscribe('templates.ping', {
      callback: (_e, m) => m.respond(JSON.stringify({ response: { service: 'templates' }, isDisposed: true })),
    });
    nc.subscribe('templates.stats', { callback: () => undefined });
    await nc.flush();
    return nc;
  };

  beforeAll(async () => {
    nats = await startNats({ storeDir });
    client = await connectNats(nats.url, 'caller');
    responder = await startResponder(nats.url);
    rpc = new RpcClient(client, { shards: 1, timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await client?.close();
    await responder?.close();
    await nats?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('fails requests in flight at once with RPC_DISCONNECTED, then works again after the reconnect', async () => {
    expect(await rpc.request('templates.ping', {})).toEqual({ service: 'templates' });

    const started = Date.now();
    const pending = rpc.request('templates.stats', { userId: 'u' }).then(
      () => 'answered',
      (err: unknown) => err,
    );
    await new Promise((r) => setTimeout(r, 100));
    await nats.process.kill9();
    const err = await pending;
    const failedAfter = Date.now() - started;
    expect(isRpcDisconnected(err)).toBe(true);
    expect((err as { code: string }).code).toBe(RPC_DISCONNECTED);
    expect(failedAfter).toBeLessThan(1500);

    // While the broker is down, new requests fail at once too (not after the timeout).
    const t = Date.now();
    await expect(rpc.request('templates.ping', {})).rejects.toMatchObject({ code: RPC_DISCONNECTED });
    expect(Date.now() - t).toBeLessThan(200);
    expect(rpc.connected).toBe(false);

    nats = await startNats({ storeDir, port: nats.port });
    await rpc.whenConnected(15_000);
    expect(rpc.connected).toBe(true);
    // The first request after the reconnect succeeds even if the responder has not re-subscribed yet.
    expect(await rpc.request('templates.ping', {})).toEqual({ service: 'templates' });
  });

  it('connects without async stack traces (nats.js would capture one per request)', () => {
    expect((client as unknown as { options: { noAsyncTraces?: boolean } }).options.noAsyncTraces).toBe(true);
  });

  it('keeps a timeout a plain unavailable error (not a disconnect)', async () => {
    await expect(rpc.request('templates.stats', { userId: 'u' }, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});
