import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ErrorKind, SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError, metricsRegistry, Transactions } from '@bns/service-kit';
import { waitFor } from '@bns/testing';
import type { EngineListener, EngineSession } from '../engines/engine.types.js';
import { SimOutboxEntity } from '../engines/sim-outbox.entity.js';
import { SimOutboxRepository } from '../engines/sim-outbox.repository.js';
import { SimulatedEngine } from '../engines/simulated.engine.js';
import { SendEntity } from '../send.entity.js';
import type { LedgerBatchEnv } from '../ledger-batching.js';
import { SendLedger, STALE_CLAIM_SECONDS } from '../send-ledger.service.js';
import { SendsRepository } from '../sends.repository.js';
import { startHarness, type Harness } from './harness.js';

const NOT_ON_WHATSAPP = '99999999';
const quiet: EngineListener = {
  qr: () => undefined,
  pairingCode: () => undefined,
  authenticated: () => undefined,
  ready: () => undefined,
  disconnected: () => undefined,
  contact: () => undefined,
  authFailure: () => undefined,
  failed: () => undefined,
  ack: () => undefined,
  incoming: () => undefined,
};

/** Statements of one ledger kind so far, and the sends they wrote (from bns_sessions_ledger_batch_size). */
async function ledgerStatements(
  statement: 'claim' | 'sent' | 'sim_store',
  mode: 'batched' | 'alone' = 'batched',
): Promise<{ statements: number; sends: number }> {
  const metric = metricsRegistry.getSingleMetric('bns_sessions_ledger_batch_size');
  // A histogram's values carry the series name (_count, _sum, _bucket).
  const values = metric
    ? ((await metric.get()).values as { metricName?: string; labels: Record<string, string | number>; value: number }[])
    : [];
  const total = (suffix: string) =>
    values
      .filter(
        (v) =>
          v.metricName === `bns_sessions_ledger_batch_size${suffix}` &&
          v.labels.statement === statement &&
          v.labels.mode === mode,
      )
      .reduce((sum, v) => sum + v.value, 0);
  return { statements: total('_count'), sends: total('_sum') };
}

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
    const session = engine.create(
      { userId, restore: { phoneNumber: '85290000000' } },
      { ...quiet, ready: () => (ready = true) },
    );
    sessions.push(session);
    await session.start();
    await waitFor(() => ready, 5000);
    const spy = jest.spyOn(session, 'send');
    return { session, sends: () => spy.mock.calls.length };
  }
  const arrived = (userId: string) => h.db.getRepository(SimOutboxEntity).countBy({ userId });
  const ledgerRow = (userId: string, idempotencyKey: string) =>
    h.db.getRepository(SendEntity).findOneBy({ userId, idempotencyKey });
  /** Ages a claim as if its process had died that long ago. */
  const age = (userId: string, idempotencyKey: string, seconds: number) =>
    h.db
      .getRepository(SendEntity)
      .update({ userId, idempotencyKey }, { createdAt: () => `now() - make_interval(secs => ${seconds})` });

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
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({
      status: 'sent',
      messageId: first.messageId,
      text: 'hello',
      kind: 'job',
    });
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
      if (r.status === 'rejected')
        expect([(r.reason as AppError).kind, (r.reason as AppError).code]).toEqual([
          ErrorKind.Conflict,
          SessionsErrorCode.SendInProgress,
        ]);
    }
  });

  it('a live claim blocks a second send; a stale one (its process died) is taken over, once', async () => {
    const userId = 'user_stale';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234569', text: 'hello', idempotencyKey: 'job-3:91234569' };
    expect(await h.get(SendsRepository).claim(userId, req.idempotencyKey, 'job', req.to, req.text)).toBe(true); // a worker that then died

    const blocked = await failureOf(ledger.send(userId, req, session));
    expect([blocked.kind, blocked.code, blocked.message]).toEqual([
      ErrorKind.Conflict,
      SessionsErrorCode.SendInProgress,
      SESSION_MESSAGES.sendInProgress,
    ]);
    expect(sends()).toBe(0);

    await age(userId, req.idempotencyKey, STALE_CLAIM_SECONDS + 1);
    const takeovers = await Promise.allSettled([
      ledger.send(userId, req, session),
      ledger.send(userId, req, session),
      ledger.send(userId, req, session),
    ]);
    expect(sends()).toBe(1);
    expect(takeovers.filter((r) => r.status === 'fulfilled' && !r.value.duplicate)).toHaveLength(1);
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({ status: 'sent' });
    expect(await arrived(userId)).toBe(1);
  });

  it('a claim left by the process before this one is taken over at once, before the stale time', async () => {
    const userId = 'user_restarted';
    const { session, sends } = await linked(userId);
    const req = { userId, to: '91234570', text: 'hello', idempotencyKey: 'job-4:91234570' };
    // The shard's previous process claimed the key, then was killed before it sent.
    expect(await h.get(SendsRepository).claim(userId, req.idempotencyKey, 'job', req.to, req.text)).toBe(true);
    expect((await failureOf(ledger.send(userId, req, session))).code).toBe(SessionsErrorCode.SendInProgress);

    // The shard's next process: the same claim, seconds old, is its predecessor's.
    const restarted = new SendsRepository(h.get(Transactions), {
      SESSIONS_LEDGER_BATCH: 100,
      SESSIONS_LEDGER_STATEMENTS: 1,
    });
    await restarted.onModuleInit();
    const next = new SendLedger(restarted, { SEND_TIMEOUT_MS: 5000 });
    const replies = await Promise.allSettled([next.send(userId, req, session), next.send(userId, req, session)]);
    expect(sends()).toBe(1);
    expect(replies.filter((r) => r.status === 'fulfilled' && !r.value.duplicate)).toHaveLength(1);
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({ status: 'sent' });
    expect(await arrived(userId)).toBe(1);
    // A claim the new process makes itself is live to it.
    const own = { ...req, idempotencyKey: 'job-4:91234570:b' };
    expect(await restarted.claim(userId, own.idempotencyKey, 'job', own.to, own.text)).toBe(true);
    expect((await failureOf(next.send(userId, own, session))).code).toBe(SessionsErrorCode.SendInProgress);
  });

  it('remembers "not on WhatsApp" without asking again, and leaves no row when the account is not linked', async () => {
    const userId = 'user_refused';
    const { session, sends } = await linked(userId);
    const req = { userId, to: NOT_ON_WHATSAPP, text: 'hello', idempotencyKey: `job-4:${NOT_ON_WHATSAPP}` };
    for (let i = 0; i < 2; i++) {
      const refused = await failureOf(ledger.send(userId, req, session));
      expect([refused.kind, refused.code, refused.message]).toEqual([
        ErrorKind.Validation,
        SessionsErrorCode.NotOnWhatsApp,
        SESSION_MESSAGES.notOnWhatsApp,
      ]);
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
    // The job's log shows the contract's words, never the engine's internals.
    expect(failed.message).toBe(SESSION_MESSAGES.sendFailed);
    expect(tries).toBe(3);
    expect(await ledgerRow(userId, req.idempotencyKey)).toBeNull(); // not left `sending` for minutes
    spy.mockRestore();
    expect(await ledger.send(userId, req, session)).toMatchObject({ duplicate: false });
    expect(sends()).toBe(2);
    expect(await arrived(userId)).toBe(1);
  });

  it('many accounts sending at once: each send is claimed, stored and marked once, by far fewer statements than sends', async () => {
    const users = Array.from({ length: 60 }, (_, i) => `user_many_${i}`);
    const accounts = await Promise.all(users.map((u) => linked(u)));
    const kinds = ['claim', 'sim_store', 'sent'] as const;
    const before = await Promise.all(kinds.map((k) => ledgerStatements(k)));

    const replies = await Promise.all(
      users.map((userId, i) =>
        ledger.send(
          userId,
          { userId, to: '91234572', text: `hello ${i}`, idempotencyKey: `job-6:${i}` },
          accounts[i]!.session,
        ),
      ),
    );

    expect(replies.every((r) => r.status === 'sent' && !r.duplicate && r.messageId !== '')).toBe(true);
    expect(new Set(replies.map((r) => r.messageId)).size).toBe(users.length);
    for (const [i, userId] of users.entries()) {
      expect(accounts[i]!.sends()).toBe(1);
      expect(await ledgerRow(userId, `job-6:${i}`)).toMatchObject({
        status: 'sent',
        messageId: replies[i]!.messageId,
        text: `hello ${i}`,
      });
      const stored = await h.db.getRepository(SimOutboxEntity).findBy({ userId });
      expect(stored.map((m) => [m.idempotencyKey, m.messageId, m.text])).toEqual([
        [`job-6:${i}`, replies[i]!.messageId, `hello ${i}`],
      ]);
    }
    const after = await Promise.all(kinds.map((k) => ledgerStatements(k)));
    for (const [k, kind] of kinds.entries()) {
      const statements = after[k]!.statements - before[k]!.statements;
      expect([kind, after[k]!.sends - before[k]!.sends]).toEqual([kind, users.length]);
      // Batches formed: with 2 statements of each kind in flight, 60 sends at once need far fewer.
      expect([kind, statements < users.length / 4]).toEqual([kind, true]);
    }
  });

  it('sends milliseconds apart whose caller lets the record wait (recordWaitMs) share one sent mark; the message leaves at once', async () => {
    const users = Array.from({ length: 6 }, (_, i) => `user_trickle_${i}`);
    const accounts = await Promise.all(users.map((u) => linked(u)));
    // Sent marks written in any mode (batched or alone).
    const marks = async () => {
      const [batched, alone] = await Promise.all([ledgerStatements('sent'), ledgerStatements('sent', 'alone')]);
      return { statements: batched.statements + alone.statements, sends: batched.sends + alone.sends };
    };
    const before = await marks();
    const started = performance.now();
    const replies = await Promise.all(
      users.map(async (userId, i) => {
        await new Promise((r) => setTimeout(r, 3 * i));
        const reply = await ledger.send(
          userId,
          { userId, to: '91234573', text: `trickle ${i}`, idempotencyKey: `job-t:${i}`, recordWaitMs: 100 },
          accounts[i]!.session,
        );
        return { reply, ms: performance.now() - started };
      }),
    );
    for (const [i, userId] of users.entries()) {
      expect(replies[i]!.reply).toMatchObject({ status: 'sent', duplicate: false });
      expect(accounts[i]!.sends()).toBe(1);
      // Replied only once the record is in.
      expect(await ledgerRow(userId, `job-t:${i}`)).toMatchObject({
        status: 'sent',
        messageId: replies[i]!.reply.messageId,
      });
    }
    const after = await marks();
    // Without the wait each mark is its own statement (6); with it the first holds the slot for the rest.
    expect(after.sends - before.sends).toBe(users.length);
    expect(after.statements - before.statements).toBeLessThanOrEqual(2);
    // The wait is bounded: nobody waited much past recordWaitMs for its reply.
    expect(Math.max(...replies.map((r) => r.ms))).toBeLessThan(2000);
  });

  /** The ledger and simulated store on their own repositories with one statement of each kind in flight: calls of one turn share it. */
  function oneSlot() {
    const env: LedgerBatchEnv = { SESSIONS_LEDGER_BATCH: 100, SESSIONS_LEDGER_STATEMENTS: 1 };
    const tx = h.get(Transactions);
    const sends = new SendsRepository(tx, env);
    const outbox = new SimOutboxRepository(tx, env);
    return { sends, outbox, ledger: new SendLedger(sends, { SEND_TIMEOUT_MS: 5000 }) };
  }

  it('two sends of one key in one batch: one claim wins and sends once, the other answers "in progress" or the duplicate', async () => {
    const userId = 'user_same_batch';
    const { session, sends } = await linked(userId);
    const other = await linked('user_same_batch_other');
    const slot = oneSlot();
    const claims = await ledgerStatements('claim');
    const req = { userId, to: '91234573', text: 'hello', idempotencyKey: 'job-7:91234573' };
    const otherReq = {
      userId: 'user_same_batch_other',
      to: '91234573',
      text: 'hello',
      idempotencyKey: 'job-7:91234573',
    };

    const results = await Promise.allSettled([
      slot.ledger.send(userId, req, session),
      slot.ledger.send('user_same_batch_other', otherReq, other.session),
      slot.ledger.send(userId, req, session),
    ]);

    const after = await ledgerStatements('claim');
    expect([after.statements - claims.statements, after.sends - claims.sends]).toEqual([1, 3]); // one statement for the three claims
    expect(sends()).toBe(1);
    expect(other.sends()).toBe(1);
    expect(await arrived(userId)).toBe(1);
    const mine = [results[0]!, results[2]!];
    const fresh = mine.filter((r) => r.status === 'fulfilled' && !r.value.duplicate);
    expect(fresh).toHaveLength(1);
    for (const r of mine) {
      if (r.status === 'rejected')
        expect([(r.reason as AppError).kind, (r.reason as AppError).code]).toEqual([
          ErrorKind.Conflict,
          SessionsErrorCode.SendInProgress,
        ]);
      else if (r.value.duplicate)
        expect(r.value.messageId).toBe((fresh[0] as PromiseFulfilledResult<{ messageId: string }>).value.messageId);
    }
    expect(results[1]).toMatchObject({ status: 'fulfilled', value: { duplicate: false } });
    expect(await ledgerRow(userId, req.idempotencyKey)).toMatchObject({ status: 'sent' });
  });

  it('repositories in one batch: a key twice is claimed once, and stored once (the second answers nothing while the first stores it)', async () => {
    const { sends, outbox } = oneSlot();
    const claimed = await Promise.all([
      sends.claim('user_repo', 'k1', 'job', '91234574', 'a'),
      sends.claim('user_repo', 'k1', 'job', '91234574', 'a'),
      sends.claim('user_repo', 'k2', 'job', '91234574', 'b'),
      sends.claim('user_repo', 'k1', 'job', '91234574', 'a'),
    ]);
    expect(claimed).toEqual([true, false, true, false]);
    expect(
      await Promise.all([
        sends.claim('user_repo', 'k1', 'job', '91234574', 'a'),
        sends.claim('user_repo', 'k3', 'job', '91234574', 'c'),
      ]),
    ).toEqual([false, true]);

    const stored = await Promise.all([
      outbox.deliverOnce('user_repo', 'k1', '85290000000', '91234574', 'a'),
      outbox.deliverOnce('user_repo', 'k1', '85290000000', '91234574', 'a'),
      outbox.deliverOnce('user_repo', 'k2', '85290000000', '91234574', 'b'),
    ]);
    expect(stored[0]).toEqual({ messageId: expect.any(String), sentAt: expect.any(Date) });
    expect(stored[1]).toBeUndefined();
    expect(stored[2]!.messageId).not.toBe(stored[0]!.messageId);
    // A repeat after the store committed answers the one copy, also twice in one batch.
    const again = await Promise.all([
      outbox.deliverOnce('user_repo', 'k1', '85290000000', '91234574', 'other'),
      outbox.deliverOnce('user_repo', 'k1', '85290000000', '91234574', 'other'),
      outbox.deliverOnce('user_repo', 'k4', '85290000000', '91234574', 'd'),
    ]);
    expect(again[0]).toEqual(stored[0]);
    expect(again[1]).toEqual(stored[0]);
    expect(again[2]!.messageId).toEqual(expect.any(String));
    expect(await h.db.getRepository(SimOutboxEntity).findBy({ userId: 'user_repo' })).toHaveLength(3);

    const at = new Date('2026-01-02T03:04:05.000Z');
    await Promise.all([
      sends.markSent('user_repo', 'k1', 'm1', at),
      sends.markSent('user_repo', 'k2', 'm2', at),
      sends.markSent('user_repo', 'k3', 'm3', at),
    ]);
    for (const [key, messageId] of [
      ['k1', 'm1'],
      ['k2', 'm2'],
      ['k3', 'm3'],
    ] as const) {
      expect(await ledgerRow('user_repo', key)).toMatchObject({ status: 'sent', messageId, sentAt: at });
    }
  });

  it('a restored link replays the receipts of its newest messages of the window, not of the oldest (a busy hour holds more than the cap)', async () => {
    const { outbox } = oneSlot();
    const repo = h.db.getRepository(SimOutboxEntity);
    const now = Date.now();
    // Five messages a minute apart, the oldest first.
    await repo.insert(
      Array.from({ length: 5 }, (_, i) => ({
        userId: 'user_replay',
        idempotencyKey: `r${i}`,
        messageId: `00000000-0000-4000-8000-00000000000${i}`,
        fromNumber: '85290000000',
        toNumber: '91234575',
        text: 'x',
        sentAt: new Date(now - (5 - i) * 60_000),
      })),
    );
    const ids = (await outbox.sentSince('user_replay', new Date(now - 3_600_000), 3)).map((id) => id.slice(-1));
    // The three newest, oldest of them first.
    expect(ids).toEqual(['2', '3', '4']);
  });

  it('a batch one bad claim fails runs each alone: only that caller fails, the others are claimed', async () => {
    const { sends } = oneSlot();
    const alone = await ledgerStatements('claim', 'alone');
    const results = await Promise.allSettled([
      sends.claim('user_bad', 'k1', 'job', '91234575', 'fine'),
      sends.claim('user_bad', 'k2', 'job', '91234575', 'not\u0000text'), // Postgres refuses NUL in text
      sends.claim('user_bad', 'k3', 'job', '91234575', 'fine'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect([
      (results[0] as PromiseFulfilledResult<boolean>).value,
      (results[2] as PromiseFulfilledResult<boolean>).value,
    ]).toEqual([true, true]);
    expect((await ledgerStatements('claim', 'alone')).statements - alone.statements).toBe(1);
    expect(await ledgerRow('user_bad', 'k2')).toBeNull();
    expect(await ledgerRow('user_bad', 'k1')).toMatchObject({ status: 'sending' });
  });
});
