import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Controller, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload, type MicroserviceOptions } from '@nestjs/microservices';
import type { NatsConnection } from '@nats-io/transport-node';
import { CommonErrorCode, ErrorKind, LIMITS, MESSAGES, type RequestOf } from '@bns/contracts';
import { startNats, type Nats } from '@bns/testing';
import { metricsRegistry } from '../src/metrics/metrics.js';
import { connectNats } from '../src/nats/connection.js';
import { KitNatsServer } from '../src/nats/nats-server.strategy.js';
import { Rpc } from '../src/nats/rpc.decorator.js';
import { RpcClient } from '../src/nats/rpc-client.js';

/** A secret the big reply carries: it must reach neither the caller nor the log. */
const SECRET = 'user_secret_85291234567';

/** `templates.list` answers one entry, or for user "big" more than one NATS message (1 MiB) holds. */
@Controller()
class ListHandler {
  @Rpc('templates.list')
  list(@Payload() req: RequestOf<'templates.list'>): { text: string }[] {
    return req.userId === 'big' ? [{ text: SECRET + 'x'.repeat(LIMITS.natsMaxPayloadBytes + 1) }] : [{ text: 'small' }];
  }
}

@Module({ controllers: [ListHandler] })
class ListModule {}

/**
 * A reply too large to publish: nats.js throws, and without a guard the caller waited its whole
 * timeout (a 503 after 10 s for the user). KitNatsServer answers a small PayloadTooLarge error at once.
 */
describe('KitNatsServer: a reply over max_payload', () => {
  let nats: Nats;
  let app: Awaited<ReturnType<typeof NestFactory.createMicroservice>>;
  let caller: NatsConnection;
  let rpc: RpcClient;

  beforeAll(async () => {
    nats = await startNats();
    app = await NestFactory.createMicroservice<MicroserviceOptions>(ListModule, {
      strategy: new KitNatsServer(nats.url, 'reply-size-test', 'templates'),
      logger: false,
    });
    await app.listen();
    caller = await connectNats(nats.url, 'reply-size-caller');
    rpc = new RpcClient(caller, { shards: 1, timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await caller?.close();
    await app?.close();
    await nats?.stop();
  });

  it('answers a plain-words PayloadTooLarge error at once, not a timeout, and logs the subject only', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const started = Date.now();
    const error = await rpc.request('templates.list', { userId: 'big' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toMatchObject({
      kind: ErrorKind.PayloadTooLarge,
      code: CommonErrorCode.ReplyTooLarge,
      message: MESSAGES.replyTooLarge,
    });
    expect(MESSAGES.replyTooLarge).toBe('The answer is too large to send at once. Ask for fewer items.');

    const warnings = warn.mock.calls.filter((args) => JSON.stringify(args).includes('max_payload'));
    expect(warnings).toEqual([[{ subject: 'templates.list' }, expect.any(String)]]);
    expect(JSON.stringify(warn.mock.calls)).not.toContain(SECRET);
    warn.mockRestore();

    const metrics = await metricsRegistry.metrics();
    expect(metrics).toMatch(
      /bns_rpc_server_requests_total\{[^}]*subject="templates.list"[^}]*outcome="payload_too_large"[^}]*\} 1/,
    );
    expect(metrics).not.toContain(SECRET);
  });

  it('keeps answering the requests that fit', async () => {
    expect(await rpc.request('templates.list', { userId: 'small' })).toEqual([{ text: 'small' }]);
    const [big, small] = await Promise.allSettled([
      rpc.request('templates.list', { userId: 'big' }),
      rpc.request('templates.list', { userId: 'u' }),
    ]);
    expect(big).toMatchObject({ status: 'rejected', reason: { code: CommonErrorCode.ReplyTooLarge } });
    expect(small).toEqual({ status: 'fulfilled', value: [{ text: 'small' }] });
  });
});
