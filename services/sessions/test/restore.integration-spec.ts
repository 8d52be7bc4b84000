import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorKind, SESSION_MESSAGES, SessionsErrorCode, shardOf } from '@bns/contracts';
import { AppError, connectNats, RpcClient } from '@bns/service-kit';
import { devSignIn, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { linkUser, outbox, type LinkedUser } from './link-helpers.js';
import { RecordingSocket } from './socket-helpers.js';

/** A fresh tab asks non-explicitly, as the web does on load: a restored link answers exist. */
async function existsAfterReload(gatewayUrl: string, user: LinkedUser): Promise<{ id: string; phoneNumber: string }> {
  const tab = await RecordingSocket.connect(gatewayUrl, user.token);
  try {
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    return (await tab.waitFor('exist', 1, 20_000)).payload;
  } finally {
    tab.close();
  }
}

describe('links survive a crash and a shard resize without a new scan', () => {
  let sys: System;
  let nc: NatsConnection;
  const extra: ServiceHandle[] = [];
  const users: LinkedUser[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      services: ['sessions'],
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
    });
    nc = await connectNats(sys.nats.url, 'restore-test');
    // Enough users that both shards hold some and the 2 → 3 resize moves at least one of them.
    for (let i = 0; users.length < 6 || !users.some((u) => shardOf(u.userId, 2) !== shardOf(u.userId, 3)); i++) {
      users.push(await linkUser(sys.gateway.url, `restore-${i}@example.com`));
    }
    for (const u of users) u.tab.close();
    await waitFor(async () => {
      for (const u of users) if ((await outbox(sys.gateway.url, u.token)).length === 0) return false;
      return true;
    }, 10_000);
  }, 180_000);

  afterAll(async () => {
    for (const u of users) u.tab.close();
    await Promise.all(extra.map((h) => h.stop()));
    await nc?.drain();
    await sys?.stop();
  });

  it('restores every link of a shard after kill -9 of its process, without a second welcome message', async () => {
    const victim = users[0]!;
    const shard = shardOf(victim.userId, 2);
    const handle = sys.services.find((h) => h.label === `sessions-${shard}`)!;
    await handle.kill9();

    const rpc = new RpcClient(nc, { shards: 2, timeoutMs: 1000 });
    const down = await rpc.call('sessions.status', { userId: victim.userId }).catch((e: AppError) => e);
    expect((down as AppError).kind).toBe(ErrorKind.Unavailable);

    extra.push(await sys.start('sessions', { SHARD_INDEX: String(shard) }, `sessions-${shard}-restarted`));
    for (const u of users.filter((x) => shardOf(x.userId, 2) === shard)) {
      expect(await existsAfterReload(sys.gateway.url, u)).toEqual({ id: u.sessionId, phoneNumber: u.phoneNumber });
    }
    const sent = await rpc.call('sessions.send', {
      userId: victim.userId,
      to: '91111111',
      text: 'after a crash',
      idempotencyKey: 'job-r:91111111',
    });
    expect(sent.duplicate).toBe(false);
    const welcomes = (await outbox(sys.gateway.url, victim.token)).filter(
      (m) => m.text === SESSION_MESSAGES.autoLoginSuccess,
    );
    expect(welcomes).toHaveLength(1);
  });

  it('restores every link on its new shard after a 2 → 3 resize', async () => {
    // A resize is a restart of every replica (and of the gateway, which routes by the count) with the new count.
    await Promise.all([...sys.services.filter((h) => h.name === 'sessions'), ...extra].map((h) => h.stop()));
    await sys.gateway.stop();
    const resized = { SESSIONS_SHARDS: '3' };
    for (let k = 0; k < 3; k++)
      extra.push(await sys.start('sessions', { ...resized, SHARD_INDEX: String(k) }, `sessions-${k}-of-3`));
    const gateway = await sys.start('gateway', resized, 'gateway-3');
    extra.push(gateway);

    const rpc = new RpcClient(nc, { shards: 3, timeoutMs: 5000 });
    for (const u of users) {
      const fresh = await devSignIn(gateway.url, u.email);
      const restored = await existsAfterReload(gateway.url, { ...u, token: fresh.token });
      expect(restored).toEqual({ id: u.sessionId, phoneNumber: u.phoneNumber });
      expect(await rpc.call('sessions.status', { userId: u.userId })).toEqual({
        state: 'exist',
        sessionId: u.sessionId,
        phoneNumber: u.phoneNumber,
      });
      const sent = await rpc.call('sessions.send', {
        userId: u.userId,
        to: '92222222',
        text: 'after resize',
        idempotencyKey: `job-z:92222222`,
      });
      expect(sent.duplicate).toBe(false);
    }
    // Each shard holds exactly its own users: a request routed to another shard (a stale count) is refused.
    const moved = users.find((u) => shardOf(u.userId, 2) !== shardOf(u.userId, 3))!;
    const wrongShard = [0, 1, 2].find((k) => k !== shardOf(moved.userId, 3))!;
    const refused = (await rpc
      .call('sessions.connect', { userId: moved.userId, explicit: true }, { shard: wrongShard })
      .catch((e: AppError) => e)) as AppError;
    expect([refused.kind, refused.code]).toEqual([ErrorKind.Unavailable, SessionsErrorCode.WrongShard]);
  });
});
