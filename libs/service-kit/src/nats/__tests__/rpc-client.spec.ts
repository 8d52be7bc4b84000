import { describe, expect, it } from '@jest/globals';
import { headers, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { CommonErrorCode } from '@bns/contracts';
import { AppError } from '../../errors/app-error.js';
import { metricsRegistry } from '../../metrics/metrics.js';
import { RpcClient } from '../rpc-client.js';

interface Published {
  subject: string;
  body: string;
  reply: string;
  headers: MsgHdrs | undefined;
  /** Which batch (event-loop turn of publishing) it left in. */
  batch: number;
}

/**
 * A NATS connection that records what is published and lets the test answer on the client's inbox.
 * Publishes made from one setImmediate callback (RpcClient's batch) share a batch number.
 */
function fakeConnection() {
  const published: Published[] = [];
  let inbox: ((err: Error | null, msg: Msg) => void) | undefined;
  let batch = 0;
  let batchOpen = false;
  const nc = {
    subscribe: (_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }) => {
      inbox = opts.callback;
      return { unsubscribe: () => undefined };
    },
    status: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => undefined) }) }),
    isClosed: () => false,
    publish: (subject: string, body: string, opts: { reply: string; headers?: MsgHdrs }) => {
      if (!batchOpen) {
        batchOpen = true;
        batch++;
        queueMicrotask(() => (batchOpen = false));
      }
      published.push({ subject, body, reply: opts.reply, headers: opts.headers, batch });
    },
  };
  /** Answers a published request with `data` (and `hdrs`), as the broker would deliver it. */
  const answer = (to: Published, data: string, hdrs?: MsgHdrs) => {
    const bytes = new TextEncoder().encode(data);
    inbox!(null, {
      subject: to.reply,
      data: bytes,
      headers: hdrs,
      json: () => JSON.parse(data),
      string: () => data,
    } as unknown as Msg);
  };
  return { nc: nc as unknown as NatsConnection, published, answer };
}

const untilPublished = async (published: Published[], n: number) => {
  for (let i = 0; i < 100 && published.length < n; i++) await new Promise((r) => setImmediate(r));
  expect(published).toHaveLength(n);
};

describe('RpcClient', () => {
  it("sends Nest's wire format (the subject as pattern, the payload, an id of its own), the requests of one turn together", async () => {
    const { nc, published, answer } = fakeConnection();
    const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 5_000 });
    const replies = [rpc.request('templates.list', { userId: 'a' }), rpc.request('templates.list', { userId: 'b' })];
    await untilPublished(published, 2);
    const packets = published.map((p) => JSON.parse(p.body) as { pattern: string; data: unknown; id: unknown });
    expect(packets.map(({ pattern, data }) => ({ pattern, data }))).toEqual([
      { pattern: 'templates.list', data: { userId: 'a' } },
      { pattern: 'templates.list', data: { userId: 'b' } },
    ]);
    expect(packets.every((p) => typeof p.id === 'string' && p.id !== '')).toBe(true);
    expect(new Set(packets.map((p) => p.id)).size).toBe(2);
    expect(published[0]!.batch).toBe(published[1]!.batch);
    // No trace to carry (tracing off): a plain message, no headers.
    expect(published.map((p) => p.headers)).toEqual([undefined, undefined]);

    // Replies are matched by their inbox subject, whatever their order.
    answer(published[1]!, JSON.stringify({ id: packets[1]!.id, response: { for: 'b' }, isDisposed: true }));
    answer(
      published[0]!,
      JSON.stringify({
        id: packets[0]!.id,
        err: { kind: 'not_found', code: 'TEMPLATE_NOT_FOUND', message: 'Template not found' },
        isDisposed: true,
      }),
    );
    await expect(replies[1]).resolves.toEqual({ for: 'b' });
    await expect(replies[0]).rejects.toMatchObject({ kind: 'not_found', code: 'TEMPLATE_NOT_FOUND' });
  });

  it('rejects, never throws, a request it cannot address (a sharded call without a user id)', async () => {
    const rpc = new RpcClient(fakeConnection().nc, { shards: 2, timeoutMs: 5_000 });
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = rpc.request('sessions.status', {} as never))).not.toThrow();
    await expect(pending).rejects.toBeInstanceOf(RangeError);
  });

  it('carries a request of another protocol (requestMessage): its headers and body out, the reply message back, uncounted', async () => {
    const { nc, published, answer } = fakeConnection();
    const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 5_000 });
    const hdrs = headers();
    hdrs.set('Nats-Expected-Last-Subject-Sequence', '4');
    const subject = '$KV.limits.user-user_secret42';
    const reply = rpc.requestMessage(subject, '1234', { headers: hdrs });
    const other = rpc.request('templates.list', { userId: 'c' });
    await untilPublished(published, 2);
    expect(published[0]).toMatchObject({ subject, body: '1234', headers: hdrs });
    expect(published[1]!.batch).toBe(published[0]!.batch); // one socket write with the other requests
    answer(published[0]!, '{"stream":"KV_limits","seq":5}');
    expect((await reply).string()).toBe('{"stream":"KV_limits","seq":5}');
    answer(published[1]!, JSON.stringify({ response: [], isDisposed: true }));
    await other;
    // The subject named a user: it is in no metric label.
    expect(await metricsRegistry.metrics()).not.toContain('user_secret42');

    // Nobody listening: the broker's empty 503 is "unavailable".
    const nobody = rpc.requestMessage('raw.nobody', 'x');
    await untilPublished(published, 3);
    const status = headers(503, 'No Responders');
    answer(published[2]!, '', status);
    await expect(nobody).rejects.toBeInstanceOf(AppError);
    await expect(nobody).rejects.toMatchObject({ code: CommonErrorCode.ServiceUnavailable });
  });
});
