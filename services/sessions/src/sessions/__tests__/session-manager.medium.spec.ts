import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Subscription } from '@nats-io/transport-node';
import {
  idempotencyKeyOf,
  SESSION_MESSAGES,
  SessionsErrorCode,
  type MessageStatusEvent,
  type SessionStateEvent,
} from '@bns/contracts';
import { loadEnv, OutboxPublisher, OutboxRepository, RpcClient } from '@bns/service-kit';
import { waitFor } from '@bns/testing';
import { SESSIONS_ENV } from '../../config/env.js';
import { engineProvider, stateKeysProvider } from '../engines/engine.provider.js';
import { SimAuthRepository } from '../engines/sim-auth.repository.js';
import { SessionStateSeal } from '../state-seal.js';
import { SimOutboxRepository } from '../engines/sim-outbox.repository.js';
import { WebjsAuthRepository } from '../engines/webjs-auth.repository.js';
import { EngineListeners } from '../engine-listeners.js';
import { LinksRepository } from '../links.repository.js';
import { MessageEvents } from '../message-events.service.js';
import { SendLedger } from '../send-ledger.service.js';
import { SendsRepository } from '../sends.repository.js';
import { LidsRepository } from '../lids.repository.js';
import { SessionEvents } from '../session-events.js';
import { SessionManager } from '../session-manager.service.js';
import { SimulatorControls } from '../simulator-controls.service.js';
import { UserSessions } from '../user-sessions.js';
import { startHarness, TEST_ENV, type Harness } from './harness.js';

/**
 * SessionManager with its engine listener and the simulator's controls, in-process (Nest DI as the
 * sessions module wires them), on a real Postgres and a real NATS, with the simulated engine: a link
 * from the first QR to ready, the welcome message, an inbound message, the phone unlinking, sign-out.
 */
describe('SessionManager (in-process, real Postgres and NATS, simulated engine)', () => {
  let h: Harness;
  let manager: SessionManager;
  let simulator: SimulatorControls;
  let states: Subscription;
  let statuses: Subscription;
  const heard: SessionStateEvent[] = [];
  const receipts: (MessageStatusEvent & { seenAt: number })[] = [];
  const stateOf = (userId: string) => heard.filter((e) => e.userId === userId).map((e) => e.state);

  beforeAll(async () => {
    h = await startHarness(
      [
        stateKeysProvider,
        engineProvider,
        SimAuthRepository,
        SessionStateSeal,
        LinksRepository,
        SendsRepository,
        LidsRepository,
        SimOutboxRepository,
        WebjsAuthRepository,
        OutboxRepository,
        OutboxPublisher,
        SendLedger,
        SessionEvents,
        MessageEvents,
        UserSessions,
        EngineListeners,
        SessionManager,
        SimulatorControls,
      ],
      {
        nats: true,
        env: {
          ...loadEnv(SESSIONS_ENV, { SESSION_STATE_KEY: randomBytes(32).toString('base64') }),
          ...TEST_ENV,
          SIM_QR_INTERVAL_MS: 5000,
          SIM_READY_DELAY_MS: 20,
          SIM_DELIVERED_DELAY_MS: 20,
          SIM_READ_DELAY_MS: 40,
          SIM_REFUSE_NUMBERS: ['85291110001'],
          SIM_REFUSE_DELAY_MS: 200,
          // No dashboard service here: the welcome message goes out once its preference lookup gives up.
          AUTO_LOGIN_PREF_TIMEOUT_MS: 100,
        },
        extra: (nc) => [{ provide: RpcClient, useValue: new RpcClient(nc, { shards: 1, timeoutMs: 2000 }) }],
      },
    );
    states = h.nc!.subscribe('events.session.state', {
      callback: (err, msg) => {
        if (!err) heard.push(msg.json<SessionStateEvent>());
      },
    });
    statuses = h.nc!.subscribe('events.message.status', {
      callback: (err, msg) => {
        if (!err) receipts.push({ ...msg.json<MessageStatusEvent>(), seenAt: Date.now() });
      },
    });
    await h.module.init();
    manager = h.get(SessionManager);
    simulator = h.get(SimulatorControls);
  }, 60_000);

  afterAll(async () => {
    states?.unsubscribe();
    statuses?.unsubscribe();
    await h?.stop();
  });

  it('links a user from the first QR to ready, sends the welcome message once, and keeps the link', async () => {
    const userId = 'user_medium_link';
    expect(await manager.status(userId)).toEqual({ state: 'no_session' });
    const { state, sessionId } = await manager.connect(userId, true);
    expect(state).toBe('creating');
    await waitFor(async () => stateOf(userId).includes('qr'), 10_000, 20, 'the first QR');
    expect(await manager.status(userId)).toEqual({ state: 'qr', sessionId });

    const { phoneNumber } = await simulator.scan(userId);
    await waitFor(async () => stateOf(userId).includes('ready'), 10_000, 20, 'ready');
    expect(await manager.status(userId)).toEqual({ state: 'exist', sessionId, phoneNumber });
    expect(await h.get(LinksRepository).find(userId)).toMatchObject({ userId, sessionId, phoneNumber });
    // A second tab's createSession: the link that exists, no new one.
    expect(await manager.connect(userId, true)).toEqual({ state: 'exist', sessionId, phoneNumber });

    await waitFor(async () => (await simulator.outbox(userId)).messages.length > 0, 10_000, 50, 'the welcome message');
    expect((await simulator.outbox(userId)).messages).toEqual([
      expect.objectContaining({
        to: phoneNumber,
        text: SESSION_MESSAGES.autoLoginSuccess,
        idempotencyKey: `welcome:${sessionId}`,
      }),
    ]);
  });

  it('passes an inbound message on, ends the link when the phone unlinks, and cleans up on sign-out', async () => {
    const userId = 'user_medium_unlink';
    await manager.connect(userId, true);
    await waitFor(async () => stateOf(userId).includes('qr'), 10_000, 20, 'the first QR');
    await simulator.scan(userId);
    await waitFor(async () => stateOf(userId).includes('ready'), 10_000, 20, 'ready');

    const inbound = await simulator.inbound({ userId, from: '85291234567', text: 'hello' });
    expect(inbound.messageId).toEqual(expect.any(String));
    await expect(simulator.inbound({ userId, from: '12', text: '' })).rejects.toMatchObject({
      code: SessionsErrorCode.InvalidRequest,
    });

    expect(await simulator.disconnect(userId)).toEqual({ disconnected: true });
    await waitFor(async () => stateOf(userId).includes('disconnected'), 10_000, 20, 'disconnected');
    expect(await manager.status(userId)).toEqual({ state: 'no_session' });
    expect(await h.get(LinksRepository).find(userId)).toBeFalsy();
    await expect(simulator.disconnect(userId)).rejects.toMatchObject({ code: SessionsErrorCode.NothingToDisconnect });

    // Linked again, then signed out: the link and its stored login are gone, and the answer says so.
    await manager.connect(userId, true);
    await waitFor(async () => stateOf(userId).filter((s) => s === 'qr').length >= 2, 10_000, 20, 'a new QR');
    await simulator.scan(userId);
    await waitFor(async () => stateOf(userId).filter((s) => s === 'ready').length >= 2, 10_000, 20, 'ready again');
    // The simulated engine keeps a login (sealed) for the link, as a real one does; sign-out drops it.
    expect(await h.get(SimAuthRepository).exists(userId)).toBe(true);
    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 1 });
    expect(await h.get(SimAuthRepository).exists(userId)).toBe(false);
    expect(await manager.status(userId)).toEqual({ state: 'no_session' });
    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 0 });
  });

  it('accepts a send to a SIM_REFUSE_NUMBERS number, then fails it within 1 s with a plain reason; others are delivered', async () => {
    const userId = 'user_medium_refused';
    await manager.connect(userId, true);
    await waitFor(async () => stateOf(userId).includes('qr'), 10_000, 20, 'the first QR');
    await simulator.scan(userId);
    await waitFor(async () => stateOf(userId).includes('ready'), 10_000, 20, 'ready');
    const jobId = '0190a1b2-0000-7000-8000-000000000001';
    const send = (to: string) => manager.send({ userId, to, text: 'Hi', idempotencyKey: idempotencyKeyOf(jobId, to) });

    const accepted = await send('91110001');
    const acceptedAt = Date.now();
    // WhatsApp took it: an id, not an error.
    expect(accepted).toMatchObject({ status: 'sent', messageId: expect.any(String), duplicate: false });
    await send('91110002');
    await waitFor(async () => receipts.some((r) => r.userId === userId && r.status === 'failed'), 5000, 20, 'refusal');
    const refusal = receipts.find((r) => r.userId === userId && r.status === 'failed')!;
    expect(refusal).toMatchObject({
      jobId,
      recipient: '91110001',
      messageId: accepted.messageId,
      error: SESSION_MESSAGES.sendRefusedAfterAccept,
      refused: true,
    });
    // Its record waits for the ledger's commit and the outbox: the refusal itself comes within 1 s.
    expect(refusal.seenAt - acceptedAt).toBeLessThan(1500);
    await waitFor(
      async () => receipts.some((r) => r.userId === userId && r.recipient === '91110002' && r.status === 'read'),
      5000,
      20,
      'the other number read',
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(receipts.filter((r) => r.userId === userId && r.recipient === '91110001').map((r) => r.status)).toEqual([
      'failed',
    ]);
  });
});
