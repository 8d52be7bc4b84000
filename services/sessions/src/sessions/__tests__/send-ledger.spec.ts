import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ErrorKind, SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { waitFor } from '@bns/testing';
import type { EngineListener, EngineSession } from '../engines/engine.types.js';
import { SimOutboxEntity } from '../engines/sim-outbox.entity.js';
import { SimOutboxRepository } from '../engines/sim-outbox.repository.js';
import { SimulatedEngine } from '../engines/simulated.engine.js';
import { SendEntity } from '../send.entity.js';
import { SendLedger, STALE_CLAIM_SECONDS } from '../send-ledger.service.js';
import { SendsRepository } from '../sends.repository.js';
import { startHarness, type Harness } from './harness.js';

const NOT_ON_WHATSAPP = '99999999';
const quiet: EngineListener = {
  qr: () => undefined,
  authenticated: () => undefined,
  ready: () => undefined,
  disconnected: () => undefined,
  authFailure: () => undefined,
  failed: () => undefined,
  ack: () => undefined,
  incoming: () => undefined,
};

async function failureOf(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a failure');
}

describe('SendLedger (in-process, real Postgres): one send per idempotency key', () => {
  let h: Harness;
  let ledger: SendLedger;
  let engine: SimulatedEngine;
  const sessions: EngineSession[] = [];

  beforeAll(async () => {
    h = await startHarness([SendsRepository, SimOutboxRepository, SendLedger]);
    ledger = h.get(SendLedger);
    engine = new SimulatedEngine(h.get(SimOutboxRepository), {
      qrIntervalMs: 60_000,
      readyDelayMs: 0,
      autoScanMs: 0,
      failNumbers: [NOT_ON_WHATSAPP],
      deliveredDelayMs: 60_000,
      readDelayMs: 60_000,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.destroy()));
    await h?.stop();
  });

  /** A linked simulated account whose engine counts what it is asked to send. */
  async function linked(userId: string): Promise<{ session: EngineSession; sends: () => number }> {
    let ready = false;
    const session = engine.create({ userId, restore: { phoneNumber: '85290000000' } }, { ...quiet, ready: () => (ready = true) });
    sessions.push(session);
    await session.start();
    await waitFor(() => ready, 5000);
    const spy = jest.spyOn(session, 'send');
    return { session, sends: () => spy.mock.calls.length };
  }
  const arrived = (userId: string) => h.db.getRepository(SimOutboxEntity).countBy({ userId });
  const ledgerRow = (userId: string, idempotencyKey: string) => h.db.getRepository(SendEntity).findOneBy({ userId, idempotencyKey });
  /** Ages a claim as if its process had died that long ago. */
  const age = (userId: string, idempotencyKey: string, seconds: number) =>
    h.db.getRepository(SendEntity).update({ userId, idempotencyKey }, { createdAt: () => `now() - make_interval(secs => ${seconds})` });

  it('the same key twice sends once and answers the first result', async () => {
    const userId = 'user_twice';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234567', text: 'hello', idempotencyKey: 'job-1:91234567' };
    const first = await ledger.send(userId, req, session);
    expect(first).toEqual({ messageId: expect.any(String), status: 'sent', at: expect.any(String), duplicate: false });
    const again = await ledger.send(userId, { ...req, text: 'another text' }, session);
    expect(again).toEqual({ ...first, duplicate: true });
    expect(sends()).toBe(1);
    expect(await arrived(userId)).toBe(1);
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({ status: 'sent', messageId: first.messageId, text: 'hello', kind: 'job' });
  });

  it('concurrent sends of one key: one claim wins, the others answer "in progress" or the duplicate', async () => {
    const userId = 'user_concurrent';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234568', text: 'hello', idempotencyKey: 'job-2:91234568' };
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => ledger.send(userId, req, session)));
    expect(sends()).toBe(1);
    expect(await arrived(userId)).toBe(1);
    const fresh = results.filter((r) => r.status === 'fulfilled' && !r.value.duplicate);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect([(r.reason as AppError).kind, (r.reason as AppError).code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.SendInProgress]);
    }
  });

  it('a live claim blocks a second send; a stale one (its process died) is taken over, once', async () => {
    const userId = 'user_stale';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234569', text: 'hello', idempotencyKey: 'job-3:91234569' };
    expect(await h.get(SendsRepository).claim(userId, req.idempotencyKey, 'job', req.to, req.text)).toBe(true); // a worker that then died

    const blocked = await failureOf(ledger.send(userId, req, session));
    expect([blocked.kind, blocked.code, blocked.message]).toEqual([ErrorKind.Conflict, SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress]);
    expect(sends()).toBe(0);

    await age(userId, req.idempotencyKey, STALE_CLAIM_SECONDS + 1);
    const takeovers = await Promise.allSettled([ledger.send(userId, req, session), ledger.send(userId, req, session), ledger.send(userId, req, session)]);
    expect(sends()).toBe(1);
    expect(takeovers.filter((r) => r.status === 'fulfilled' && !r.value.duplicate)).toHaveLength(1);
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({ status: 'sent' });
    expect(await arrived(userId)).toBe(1);
  });

  it('remembers "not on WhatsApp" without asking again, and leaves no row when the account is not linked', async () => {
    const userId = 'user_refused';
    const { session, sends } = await linked(userId);
    const req = { userId, to: NOT_ON_WHATSAPP, text: 'hello', idempotencyKey: `job-4:${NOT_ON_WHATSAPP}` };
    for (let i = 0; i < 2; i++) {
      const refused = await failureOf(ledger.send(userId, req, session));
      expect([refused.kind, refused.code, refused.message]).toEqual([ErrorKind.Validation, SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp]);
    }
    expect(sends()).toBe(1);

    const unlinked = { userId, to: '91234570', text: 'hello', idempotencyKey: 'job-4:91234570' };
    const notLinked = await failureOf(ledger.send(userId, unlinked, undefined));
    expect([notLinked.kind, notLinked.code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.NotLinked]);
    expect(await ledgerRow(userId, unlinked.idempotencyKey)).toBeNull();
    expect((await ledger.send(userId, unlinked, session)).duplicate).toBe(false);
  });

  it('a send the engine failed during a Postgres blip is released once Postgres answers, so the retry sends at once', async () => {
    const userId = 'user_blip';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234571', text: 'hello', idempotencyKey: 'job-5:91234571' };
    // The engine fails (its own write hit the outage), and so do the first two tries to release the claim.
    jest.spyOn(session, 'send').mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const repo = h.get(SendsRepository);
    const release = repo.release.bind(repo);
    let tries = 0;
    const spy = jest.spyOn(repo, 'release').mockImplementation(async (...args) => {
      if (++tries <= 2) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return release(...args);
    });
    const failed = await failureOf(ledger.send(userId, req, session));
    expect([failed.kind, failed.code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.SendFailed]);
    expect(tries).toBe(3);
    expect(await ledgerRow(userId, req.idempotencyKey)).toBeNull(); // not left `sending` for minutes
    spy.mockRestore();
    expect(await ledger.send(userId, req, session)).toMatchObject({ duplicate: false });
    expect(sends()).toBe(2);
    expect(await arrived(userId)).toBe(1);
  });
});
