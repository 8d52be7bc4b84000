import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RESULTS_LIMITS } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { LaneStepRepository } from '../../queue/lane-step.repository.js';
import { foldOf } from '../receipts.consumer.js';
import { ResultsRepository } from '../results.repository.js';
import { toResult } from '../results.service.js';

const phones = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));

/** The results repository in-process on a real Postgres: paging, folding, history. */
describe('ResultsRepository (in-process, real Postgres)', () => {
  let ip: InProcess;
  let repo: ResultsRepository;
  let tx: Transactions;

  beforeAll(async () => {
    ip = await startInProcess({}, [ResultsRepository]);
    repo = ip.get(ResultsRepository);
    tx = ip.get(Transactions);
  }, 60_000);
  afterAll(() => ip?.close());

  it('pages a 5,000-recipient job in list order: every recipient exactly once, variables attached', async () => {
    const list = phones(5000, 60_000_000);
    const jobId = await ip.seedJob('user-a', list);
    await ip.seedVariables(
      jobId,
      list.map((_, i) => ({ name: `N${i}` })),
    );
    const seen: string[] = [];
    let after = 0;
    for (;;) {
      const page = await repo.page(tx.manager, jobId, after, 500);
      if (page.length === 0) break;
      seen.push(...page.map((r) => r.phone));
      after = page.at(-1)!.seq;
    }
    expect(seen).toEqual(list);
    const first = (await repo.page(tx.manager, jobId, 0, 1))[0]!;
    expect(toResult(first)).toEqual({
      phoneNumber: list[0],
      variables: { name: 'N0' },
      status: 'pending',
      sentAt: null,
      deliveredAt: null,
      readAt: null,
      repliedAt: null,
    });
    expect(await repo.variableNames(tx.manager, jobId, 50)).toEqual(['name']);
    expect(await repo.page(tx.manager, jobId, 0, 10, ['sent'])).toEqual([]);
  }, 60_000);

  it('folds receipts once: a repeat or a late delivered after read changes nothing; a reply marks the newest send', async () => {
    const list = phones(3, 51_000_000);
    const jobId = await ip.seedJob('user-b', list);
    const recipients = ip.get(LaneStepRepository);
    await tx.run(async (em) => {
      for (const seq of [1, 2, 3]) {
        await recipients.markSending(em, jobId, seq);
        await recipients.markSent(em, jobId, seq, new Date(Date.now() - 60_000));
      }
    });
    const fold = (kind: 'delivered' | 'read', phone: string) =>
      tx.run((em) => repo.foldReceipt(em, { userId: 'user-b', jobId, phone, kind, at: new Date() }));

    expect(await fold('read', list[0]!)).toEqual({ jobId, delivered: 1, read: 1, replied: 0 });
    expect(await fold('read', list[0]!)).toEqual({ jobId, delivered: 0, read: 0, replied: 0 });
    expect(await fold('delivered', list[0]!)).toEqual({ jobId, delivered: 0, read: 0, replied: 0 });
    expect(await fold('delivered', list[1]!)).toEqual({ jobId, delivered: 1, read: 0, replied: 0 });
    // Another user's receipt for this job, or a number not in it, is ignored.
    expect(
      await tx.run((em) =>
        repo.foldReceipt(em, { userId: 'user-x', jobId, phone: list[2]!, kind: 'read', at: new Date() }),
      ),
    ).toBeUndefined();
    expect(await tx.run((em) => repo.foldReply(em, 'user-b', '99999999', new Date()))).toBeUndefined();
    const reply = await tx.run((em) => repo.foldReply(em, 'user-b', list[2]!, new Date()));
    expect(reply).toEqual({ jobId, delivered: 1, read: 1, replied: 1 });

    const statuses = (await repo.page(tx.manager, jobId, 0, 10)).map((r) => r.status);
    expect(statuses).toEqual(['read', 'delivered', 'replied']);
    // A batch usually holds several receipts of one job: they add up in one statement.
    await tx.run((em) =>
      repo.addCounts(em, [
        { jobId, delivered: 1, read: 1, replied: 0 },
        { jobId, delivered: 1, read: 0, replied: 0 },
        { jobId, delivered: 1, read: 1, replied: 1 },
      ]),
    );
    const [item] = await repo.history(tx.manager, 'user-b', 10, undefined, 100);
    expect(item).toMatchObject({ id: jobId, delivered: 3, read: 2, replied: 1, personalised: false });
  });

  it('folds a batch of receipts in one statement: several of one recipient count once, foreign and unknown ones change nothing', async () => {
    const list = phones(3, 53_000_000);
    const jobId = await ip.seedJob('user-g', list);
    const recipients = ip.get(LaneStepRepository);
    await tx.run(async (em) => {
      for (const seq of [1, 2, 3]) {
        await recipients.markSending(em, jobId, seq);
        await recipients.markSent(em, jobId, seq, new Date(Date.now() - 60_000));
      }
    });
    await tx.run((em) =>
      repo.foldReceipt(em, { userId: 'user-g', jobId, phone: list[2]!, kind: 'delivered', at: new Date() }),
    );
    const base = Date.now() - 30_000;
    const t = (s: number) => new Date(base + s * 1000);
    const deltas = await tx.run((em) =>
      repo.foldReceipts(em, [
        { userId: 'user-g', jobId, phone: list[0]!, kind: 'delivered', at: t(2) },
        { userId: 'user-g', jobId, phone: list[0]!, kind: 'read', at: t(5) },
        { userId: 'user-g', jobId, phone: list[0]!, kind: 'delivered', at: t(1) },
        { userId: 'user-g', jobId, phone: list[1]!, kind: 'delivered', at: t(3) },
        // Already delivered before the batch: only its read counts.
        { userId: 'user-g', jobId, phone: list[2]!, kind: 'read', at: t(4) },
        // Another user's receipt for this job, a number not in it, a job that does not exist.
        { userId: 'user-x', jobId, phone: list[1]!, kind: 'read', at: t(4) },
        { userId: 'user-g', jobId, phone: '99999999', kind: 'read', at: t(4) },
        { userId: 'user-g', jobId: '00000000-0000-4000-8000-000000000000', phone: list[1]!, kind: 'read', at: t(4) },
      ]),
    );
    const total = deltas.reduce(
      (a, d) => ({ delivered: a.delivered + d.delivered, read: a.read + d.read, replied: a.replied + d.replied }),
      { delivered: 0, read: 0, replied: 0 },
    );
    expect(total).toEqual({ delivered: 2, read: 2, replied: 0 });
    const rowsOf = await ip.db.query(
      `SELECT seq, delivered_at AS d, read_at AS r FROM jobs.job_recipients WHERE job_id = $1 AND delivered_at IS NOT NULL ORDER BY seq`,
      [jobId],
    );
    expect(rowsOf[0]).toEqual({ seq: 1, d: t(1), r: t(5) });
    expect(rowsOf[1]).toEqual({ seq: 2, d: t(3), r: null });
    expect(rowsOf[2].r).toEqual(t(4));
    // The same batch again (a redelivery) changes nothing.
    expect(
      await tx.run((em) =>
        repo.foldReceipts(em, [{ userId: 'user-g', jobId, phone: list[0]!, kind: 'read', at: t(9) }]),
      ),
    ).toEqual([]);
  });

  it('two folds of one recipient at once (two replicas) count it delivered once and read once', async () => {
    const list = phones(2, 52_000_000);
    const jobId = await ip.seedJob('user-f', list);
    const recipients = ip.get(LaneStepRepository);
    await tx.run(async (em) => {
      for (const seq of [1, 2]) {
        await recipients.markSending(em, jobId, seq);
        await recipients.markSent(em, jobId, seq, new Date(Date.now() - 60_000));
      }
    });
    const foldHeld = (phone: string, kind: 'delivered' | 'read') =>
      tx.run(async (em) => {
        const delta = await repo.foldReceipt(em, { userId: 'user-f', jobId, phone, kind, at: new Date() });
        await new Promise((r) => setTimeout(r, 300));
        return delta;
      });
    const foldNow = (phone: string, kind: 'delivered' | 'read') =>
      tx.run((em) => repo.foldReceipt(em, { userId: 'user-f', jobId, phone, kind, at: new Date() }));
    // A fresh recipient: the first holds its transaction open after folding; the second folds meanwhile.
    // And one already delivered: both fold the read at once.
    const cases: [string, 'delivered' | 'read', 'delivered' | 'read', { delivered: number; read: number }][] = [
      [list[0]!, 'delivered', 'read', { delivered: 1, read: 1 }],
      [list[1]!, 'read', 'read', { delivered: 0, read: 1 }],
    ];
    await foldNow(list[1]!, 'delivered');
    for (const [phone, k1, k2, expected] of cases) {
      const first = foldHeld(phone, k1);
      await new Promise((r) => setTimeout(r, 50));
      const [a, b] = await Promise.all([first, foldNow(phone, k2)]);
      expect({ delivered: a!.delivered + b!.delivered, read: a!.read + b!.read }).toEqual(expected);
    }
  });

  it('keeps what a recipient wrote back on the message it answers: NUL stripped, bounded, once per event, newest first kept', async () => {
    const list = phones(2, 55_000_000);
    const jobId = await ip.seedJob('user-r', list);
    const recipients = ip.get(LaneStepRepository);
    await tx.run(async (em) => {
      for (const seq of [1, 2]) {
        await recipients.markSending(em, jobId, seq);
        await recipients.markSent(em, jobId, seq, new Date(Date.now() - 600_000));
      }
    });
    const received = (eventId: string, text: string, secondsAgo: number) =>
      foldOf('events.message.received', {
        eventId,
        userId: 'user-r',
        from: `852${list[1]}`,
        text,
        messageId: eventId,
        at: new Date(Date.now() - secondsAgo * 1000).toISOString(),
      });
    const first = received('ev-1', 'Yes\u0000 please', 300);
    expect(first).toMatchObject({ kind: 'replied', phone: list[1], reply: { id: 'ev-1', text: 'Yes please' } });
    const long = received('ev-2', 'x'.repeat(RESULTS_LIMITS.replyTextMax + 50), 200);
    expect(long?.kind === 'replied' && long.reply.text.length).toBe(RESULTS_LIMITS.replyTextMax);
    const fold = (f: ReturnType<typeof foldOf>) =>
      tx.run((em) => {
        if (f?.kind !== 'replied') throw new Error('not a reply');
        return repo.foldReply(em, f.userId, f.phone, f.at, f.reply);
      });
    expect(await fold(first)).toEqual({ jobId, delivered: 1, read: 1, replied: 1 });
    // The same event again (a redelivery): no second reply, no second count.
    expect(await fold(first)).toEqual({ jobId, delivered: 0, read: 0, replied: 0 });
    await fold(long);
    const [, second] = await repo.page(tx.manager, jobId, 0, 10);
    expect(toResult(second!)).toMatchObject({
      phoneNumber: list[1],
      status: 'replied',
      replies: [
        { text: 'Yes please', at: first!.at.toISOString() },
        { text: 'x'.repeat(RESULTS_LIMITS.replyTextMax), at: long!.at.toISOString() },
      ],
    });
    // A recipient with no reply carries no list; the Replies filter finds only the one that wrote.
    const [one] = await repo.page(tx.manager, jobId, 0, 1);
    expect(toResult(one!).replies).toBeUndefined();
    expect((await repo.page(tx.manager, jobId, 0, 10, ['replied'])).map((r) => r.phone)).toEqual([list[1]]);
    // Many replies: the newest RESULTS_LIMITS.repliesPerRecipientMax travel with the row, oldest first.
    for (let i = 0; i < RESULTS_LIMITS.repliesPerRecipientMax + 3; i++)
      await fold(received(`ev-m${i}`, `m${i}`, 100 - i));
    const many = toResult((await repo.page(tx.manager, jobId, 1, 1))[0]!).replies!;
    expect(many).toHaveLength(RESULTS_LIMITS.repliesPerRecipientMax);
    expect(many.at(-1)!.text).toBe(`m${RESULTS_LIMITS.repliesPerRecipientMax + 2}`);
  });

  it('a skipped recipient comes after the list with its variables and why it was skipped', async () => {
    const list = phones(1, 56_000_000);
    const jobId = await ip.seedJob('user-s', list);
    await ip.db.query(
      `INSERT INTO jobs.job_skips (job_id, phone, reason, at, variables) VALUES ($1, '56999999', 'opted_out', now(), '{"name":"Fay"}')`,
      [jobId],
    );
    const skipped = await repo.page(tx.manager, jobId, 0, 10, ['skipped']);
    expect(skipped.map(toResult)).toEqual([
      expect.objectContaining({
        phoneNumber: '56999999',
        status: 'skipped',
        error: 'opted_out',
        variables: { name: 'Fay' },
      }),
    ]);
  });

  it("lists only the user's own jobs, newest first, with keyset paging", async () => {
    const mine = [
      await ip.seedJob('user-c', ['61234567']),
      await ip.seedJob('user-c', ['61234568']),
      await ip.seedJob('user-c', ['61234569']),
    ];
    await ip.seedJob('user-d', ['61234567']);
    const first = await repo.history(tx.manager, 'user-c', 2, undefined, 100);
    expect(first.map((j) => j.id)).toEqual([mine[2], mine[1]]);
    const next = await repo.history(tx.manager, 'user-c', 2, first.at(-1)!.id, 100);
    expect(next.map((j) => j.id)).toEqual([mine[0]]);
    expect(await repo.ownsJob(tx.manager, 'user-d', mine[0]!)).toBe(false);
    expect(await repo.findJob(tx.manager, 'user-d', mine[0]!)).toBeUndefined();
  });
});
