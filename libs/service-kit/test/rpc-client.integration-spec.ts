import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { startNats, type Nats } from '@bns/testing';
import { connectNats } from '../src/nats/connection.js';
import { RpcClient } from '../src/nats/rpc-client.js';

/**
 * RpcClient matches replies on one shared inbox subscription and sends the requests of one event-loop
 * turn in one write. Each caller must still get its own reply, and the failures must stay what they
 * were: no responder or no answer in time is "unavailable", quickly when nobody listens.
 */
describe('RpcClient request/reply', () => {
  let nats: Nats;
  let client: NatsConnection;
  let responder: NatsConnection;
  let rpc: RpcClient;
  const seen: Msg[] = [];

  beforeAll(async () => {
    nats = await startNats();
    client = await connectNats(nats.url, 'caller');
    responder = await connectNats(nats.url, 'responder');
    // templates.list echoes the caller's user id, after a delay that scrambles the reply order.
    responder.subscribe('templates.list', {
      callback: (_e, m) => {
        seen.push(m);
        const { data } = m.json<{ data: { userId: string } }>();
        setTimeout(
          () => m.respond(JSON.stringify({ response: { userId: data.userId }, isDisposed: true })),
          Math.random() * 20,
        );
      },
    });
    // templates.stats answers once, late: after the caller gave up.
    responder.subscribe('templates.stats', {
      callback: (_e, m) =>
        setTimeout(() => m.respond(JSON.stringify({ response: { late: true }, isDisposed: true })), 300),
    });
    await responder.flush();
    rpc = new RpcClient(client, { shards: 1, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await client?.close();
    await responder?.close();
    await nats?.stop();
  });

  it('gives each of many requests made at once its own reply', async () => {
    const users = Array.from({ length: 200 }, (_, i) => `user_${i}`);
    const replies = await Promise.all(users.map((userId) => rpc.request('templates.list', { userId })));
    expect(replies).toEqual(users.map((userId) => ({ userId })));
  });

  it('sends no NATS headers when there is no trace to carry', async () => {
    seen.length = 0;
    await rpc.request('templates.list', { userId: 'plain' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers).toBeUndefined();
  });

  it('answers "unavailable" at once when no service listens on the subject', async () => {
    const started = Date.now();
    await expect(rpc.request('dashboard.get', { userId: 'u' })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('drops a reply that comes after the timeout, and keeps answering the next requests', async () => {
    await expect(rpc.request('templates.stats', { userId: 'u' }, { timeoutMs: 100 })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    await new Promise((r) => setTimeout(r, 400)); // the late reply arrives meanwhile
    expect(await rpc.request('templates.list', { userId: 'after' })).toEqual({ userId: 'after' });
  });

  it('tells its round-trip observer how long each request took, answered or timed out', async () => {
    const heard: number[] = [];
    rpc.observeRoundTrips((ms) => heard.push(ms));
    await rpc.request('templates.list', { userId: 'timed' });
    await expect(rpc.request('templates.stats', { userId: 'u' }, { timeoutMs: 100 })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(heard).toHaveLength(2);
    expect(heard[0]).toBeGreaterThan(0);
    expect(heard[0]).toBeLessThan(1_000);
    expect(heard[1]).toBeGreaterThanOrEqual(95);
    rpc.observeRoundTrips(() => undefined);
  });

  it('counts the requests still waiting for their reply past a given time', async () => {
    // templates.stats answers after 300 ms.
    const early = [rpc.request('templates.stats', { userId: 'a' }), rpc.request('templates.stats', { userId: 'b' })];
    await new Promise((r) => setTimeout(r, 150));
    const late = rpc.request('templates.stats', { userId: 'c' });
    expect(rpc.waitingLongerThan(100)).toBe(2);
    expect(rpc.waitingLongerThan(0)).toBe(3);
    await Promise.all([...early, late]);
    expect(rpc.waitingLongerThan(0)).toBe(0);
  });
});
