import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorKind, SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError, connectNats, RpcClient } from '@bns/service-kit';
import { devSignIn, startSystem, waitFor, type System } from '@bns/testing';
import { linkUser, outbox, type LinkedUser } from './link-helpers.js';

const FAIL_NUMBER = '99999999';

async function failureOf(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

describe('sessions.send over NATS with the simulated engine', () => {
  let sys: System;
  let nc: NatsConnection;
  let rpc: RpcClient;
  let linked: LinkedUser;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      services: ['sessions'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_FAIL_NUMBERS: `852${FAIL_NUMBER}`,
        SIM_DELIVERED_DELAY_MS: '200',
        SIM_READ_DELAY_MS: '400',
      },
    });
    nc = await connectNats(sys.nats.url, 'send-test');
    rpc = new RpcClient(nc, { shards: 2, timeoutMs: 10_000 });
    linked = await linkUser(sys.gateway.url, 'sender@example.com');
  }, 120_000);

  afterAll(async () => {
    linked?.tab.close();
    await nc?.drain();
    await sys?.stop();
  });

  it('sends the auto-login success message to the account’s own number once (preference defaults to true)', async () => {
    // No dashboard runs here, so the preference lookup gets no answer and the default (on) applies.
    const messages = await waitFor(async () => {
      const m = await outbox(sys.gateway.url, linked.token);
      return m.length > 0 && m;
    }, 10_000);
    expect(messages).toEqual([
      {
        to: linked.phoneNumber,
        text: SESSION_MESSAGES.autoLoginSuccess,
        idempotencyKey: `welcome:${linked.sessionId}`,
        at: expect.any(String),
        lid: expect.stringMatching(/@lid$/),
      },
    ]);
  });

  it('sends once per idempotency key: a repeat answers the first result and sends nothing', async () => {
    const req = { userId: linked.userId, to: '91234567', text: 'Hello *there*', idempotencyKey: 'job-1:91234567' };
    const first = await rpc.call('sessions.send', req);
    expect(first).toEqual({ messageId: expect.any(String), status: 'sent', at: expect.any(String), duplicate: false });
    const again = await rpc.call('sessions.send', { ...req, text: 'a different text must not go out' });
    expect(again).toEqual({ ...first, duplicate: true });
    const [a, b] = await Promise.all([rpc.call('sessions.send', req), rpc.call('sessions.send', req)]);
    expect([a.messageId, b.messageId]).toEqual([first.messageId, first.messageId]);

    const sent = (await outbox(sys.gateway.url, linked.token)).filter((m) => m.idempotencyKey === req.idempotencyKey);
    expect(sent).toEqual([
      {
        to: '91234567',
        text: 'Hello *there*',
        idempotencyKey: 'job-1:91234567',
        at: first.at,
        lid: expect.stringMatching(/@lid$/),
      },
    ]);
  });

  it('publishes delivered then read acks as message statuses with the job, recipient and key', async () => {
    const req = { userId: linked.userId, to: '85261234567', text: 'ack me', idempotencyKey: 'job-2:85261234567' };
    const { messageId } = await rpc.call('sessions.send', req);
    const ofThisKey = () =>
      linked.tab.named('message_status').filter((e) => e.payload.idempotencyKey === req.idempotencyKey);
    const read = await waitFor(() => ofThisKey().find((e) => e.payload.status === 'read'), 10_000);
    const statuses = ofThisKey();
    expect(statuses.map((s) => s.payload.status)).toEqual(['delivered', 'read']);
    expect(read.payload).toEqual({
      jobId: 'job-2',
      recipient: '85261234567',
      messageId,
      idempotencyKey: req.idempotencyKey,
      status: 'read',
      content: 'ack me',
      at: expect.any(String),
    });
    // The welcome message is not a job's: no status is published for it.
    expect(linked.tab.named('message_status').every((e) => e.payload.jobId !== 'welcome')).toBe(true);
  });

  it('fails a number that is not on WhatsApp permanently, the same way on a retry, and sends nothing', async () => {
    const req = {
      userId: linked.userId,
      to: FAIL_NUMBER,
      text: 'nobody there',
      idempotencyKey: `job-3:${FAIL_NUMBER}`,
    };
    for (let i = 0; i < 2; i++) {
      const err = await failureOf(rpc.call('sessions.send', req));
      expect(err).toBeInstanceOf(AppError);
      expect([err.kind, err.code, err.message]).toEqual([
        ErrorKind.Validation,
        SessionsErrorCode.NotOnWhatsApp,
        'number is not on WhatsApp',
      ]);
    }
    expect((await outbox(sys.gateway.url, linked.token)).some((m) => m.to === FAIL_NUMBER)).toBe(false);
  });

  it('fails as retryable while not linked, and the same key goes out once the account is linked', async () => {
    const user = await devSignIn(sys.gateway.url, 'late-linker@example.com');
    const req = { userId: user.userId, to: '92345678', text: 'later', idempotencyKey: 'job-4:92345678' };
    const err = await failureOf(rpc.call('sessions.send', req));
    expect([err.kind, err.code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.NotLinked]);

    const late = await linkUser(sys.gateway.url, 'late-linker@example.com');
    try {
      expect((await rpc.call('sessions.send', req)).duplicate).toBe(false);
      await waitFor(
        async () => (await outbox(sys.gateway.url, late.token)).some((m) => m.idempotencyKey === req.idempotencyKey),
        5000,
      );
    } finally {
      late.tab.close();
    }
  });

  it('refuses bad input with a validation error, never an internal one', async () => {
    const err = await failureOf(
      rpc.call('sessions.send', { userId: linked.userId, to: 'abc', text: '', idempotencyKey: '' }),
    );
    expect([err.kind, err.code]).toEqual([ErrorKind.Validation, SessionsErrorCode.InvalidRequest]);
    expect(err.extra.errors).toEqual({
      to: expect.any(String),
      text: expect.any(String),
      idempotencyKey: expect.any(String),
    });
  });
});
