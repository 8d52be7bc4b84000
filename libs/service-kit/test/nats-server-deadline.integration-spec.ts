import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload, type MicroserviceOptions } from '@nestjs/microservices';
import type { NatsConnection } from '@nats-io/transport-node';
import { CommonErrorCode, ErrorKind, LIMITS, type RequestOf } from '@bns/contracts';
import { startNats, type Nats } from '@bns/testing';
import { connectNats } from '../src/nats/connection.js';
import { KitNatsServer, rpcDeadlinePassed } from '../src/nats/nats-server.strategy.js';
import { Rpc } from '../src/nats/rpc.decorator.js';
import { RpcClient } from '../src/nats/rpc-client.js';

/** Who `templates.stats` was asked for, in order; "slow:<ms>" waits that long, then says whether its deadline passed. */
const handled: string[] = [];

@Controller()
class StatsHandler {
  @Rpc('templates.stats')
  async stats(@Payload() req: RequestOf<'templates.stats'>): Promise<{ userId: string; deadlinePassed: boolean }> {
    handled.push(req.userId);
    const slow = /^slow:(\d+)$/.exec(req.userId);
    if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
    return { userId: req.userId, deadlinePassed: rpcDeadlinePassed() };
  }
}

@Module({ controllers: [StatsHandler] })
class StatsModule {}

/**
 * A request a service gets after its caller gave up (the service was stopped, NATS held the message)
 * is not acted on: the caller answered 503 already, and acting now would send a message its job
 * recorded as failed, or start a job the user was told had not started.
 */
describe("KitNatsServer: a request past its caller's deadline is not acted on", () => {
  let nats: Nats;
  let app: Awaited<ReturnType<typeof NestFactory.createMicroservice>>;
  let caller: NatsConnection;

  /** A Nest request packet as RpcClient makes it, with the deadline given. */
  const raw = async (userId: string, deadline: number | undefined) => {
    const reply = await caller.request(
      'templates.stats',
      JSON.stringify({
        pattern: 'templates.stats',
        data: { userId },
        id: '1',
        ...(deadline === undefined ? {} : { deadline }),
      }),
      { timeout: 5000 },
    );
    return reply.json<{ response?: unknown; err?: { kind: string; code: string } }>();
  };

  beforeAll(async () => {
    nats = await startNats();
    app = await NestFactory.createMicroservice<MicroserviceOptions>(StatsModule, {
      strategy: new KitNatsServer(nats.url, 'deadline-test', 'templates'),
      logger: false,
    });
    await app.listen();
    caller = await connectNats(nats.url, 'deadline-caller');
  });
  afterAll(async () => {
    await caller?.close();
    await app?.close();
    await nats?.stop();
  });

  it('drops a request that arrives more than the grace after its deadline, and handles one within it or without one', async () => {
    handled.length = 0;
    const late = await raw('late', Date.now() - LIMITS.rpcDeadlineGraceMs - 5000);
    expect(late.err).toMatchObject({ kind: ErrorKind.Unavailable, code: CommonErrorCode.RequestExpired });
    expect(handled).toEqual([]);
    expect((await raw('within-grace', Date.now() - LIMITS.rpcDeadlineGraceMs / 2)).response).toEqual({
      userId: 'within-grace',
      deadlinePassed: false,
    });
    expect((await raw('no-deadline', undefined)).response).toEqual({ userId: 'no-deadline', deadlinePassed: false });
    expect(handled).toEqual(['within-grace', 'no-deadline']);
  });

  it('every RpcClient request carries its deadline: a handler still working past it (plus the grace) knows, and can leave its work uncommitted', async () => {
    const rpc = new RpcClient(caller, { shards: 1, timeoutMs: 10_000 });
    const quick = (await rpc.call('templates.stats', { userId: 'quick' })) as unknown as { deadlinePassed: boolean };
    expect(quick.deadlinePassed).toBe(false);
    // A 300 ms timeout: the handler, 300 ms + the grace + 200 ms later, finds its deadline passed.
    const slow = `slow:${300 + LIMITS.rpcDeadlineGraceMs + 200}`;
    await expect(rpc.call('templates.stats', { userId: slow }, { timeoutMs: 300 })).rejects.toMatchObject({
      kind: ErrorKind.Unavailable,
    });
    const answered = await raw(slow, Date.now() - 10);
    expect(answered.response).toEqual({ userId: slow, deadlinePassed: true });
  });
});
