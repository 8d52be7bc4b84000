import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OUTBOX_DELETE_IDLE_MS, OutboxRepository, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../job-logs.repository.js';
import { JobJournals } from '../job-journal.js';

describe('job journal and outbox against a real Postgres (in-process)', () => {
  let app: InProcess;
  beforeAll(async () => {
    app = await startInProcess();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('writes log lines and events with the state change, or not at all when the transaction fails', async () => {
    const jobId = await app.seedJob('user_journal_1', ['91234567']);
    const tx = app.get(Transactions);
    const published = await tx.run(async (em) => {
      const journal = app.get(JobJournals).open(em, 'user_journal_1');
      await journal.log(jobId, 'info', 'first');
      journal.progress(jobId, 'running', { total: 1, sent: 0, failed: 0 });
      return journal.commit();
    });
    expect(published.map((p) => p.subject)).toEqual(['events.job.log', 'events.job.progress']);
    expect(published[0]!.payload).toMatchObject({ userId: 'user_journal_1', jobId, type: 'info', message: 'first' });

    await expect(
      tx.run(async (em) => {
        const journal = app.get(JobJournals).open(em, 'user_journal_1');
        await journal.log(jobId, 'info', 'rolled back');
        await journal.commit();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const lines = await app.get(JobLogsRepository).page(tx.manager, jobId, new Date(0), 10);
    expect(lines.map((l) => l.message)).toEqual(['first']);
  });

  it('hands rows left behind to one sweeper at a time, a bundle with all its events, and deletes what was published', async () => {
    const tx = app.get(Transactions);
    const outbox = app.get(OutboxRepository);
    // A transaction's events share one row; a lone event has a row of its own.
    const bundle = await outbox.add(tx.manager, [
      { subject: 'events.job.log', payload: { eventId: 'e-1' } as never },
      { subject: 'events.job.progress', payload: { eventId: 'e-2' } as never },
    ]);
    expect(bundle.map((r) => [r.id, r.of])).toEqual([
      [bundle[0]!.id, 2],
      [bundle[0]!.id, 2],
    ]);
    const [single] = await outbox.add(tx.manager, [
      { subject: 'events.job.log', payload: { eventId: 'e-3' } as never },
    ]);
    expect(single!.of).toBeUndefined();
    expect(await outbox.count()).toBeGreaterThanOrEqual(3);
    expect(await outbox.orphans(tx.manager, 60_000, 10)).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    await tx.run(async (a) => {
      const mine = await outbox.orphans(a, 10, 10);
      // The bundle comes back as its events, in order, each with the row's id.
      expect(mine.filter((r) => r.id === bundle[0]!.id)).toEqual([
        { id: bundle[0]!.id, subject: 'events.job.log', payload: { eventId: 'e-1' }, of: 2 },
        { id: bundle[0]!.id, subject: 'events.job.progress', payload: { eventId: 'e-2' }, of: 2 },
      ]);
      expect(mine.map((r) => r.id)).toContain(single!.id);
      // Another replica's sweep skips the locked rows.
      expect(await tx.run((b) => outbox.orphans(b, 10, 10))).toEqual([]);
      await outbox.delete([bundle[0]!.id], a);
    });
    const left = (await outbox.orphans(tx.manager, 10, 100)).map((r) => r.id);
    expect(left).toContain(single!.id);
    expect(left).not.toContain(bundle[0]!.id);
  });

  it('deletes published rows with the next write, skipping rows a sweeper holds, and on their own when no write comes', async () => {
    const tx = app.get(Transactions);
    const outbox = app.get(OutboxRepository);
    const ids = async () => (await outbox.orphans(tx.manager, 0, 1000)).map((r) => r.id);
    const event = (id: string) => ({ subject: 'events.job.log' as const, payload: { eventId: id } as never });
    await outbox.deletePublished();
    // Three rows of their own (one event each).
    const first = [];
    for (const id of ['d-1', 'd-2', 'd-3']) first.push(...(await outbox.add(tx.manager, [event(id)])));
    // d-3 is a sweeper's right now: the next write must not wait for it, nor delete it.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockedNow = new Promise<void>((r) => (locked = r));
    const sweeper = tx.run(async (em) => {
      await em.query('SELECT id FROM outbox WHERE id = $1 FOR UPDATE', [first[2]!.id]);
      locked();
      await held;
    });
    await lockedNow;
    outbox.deleteSoon(first.map((r) => r.id));
    const second = await outbox.add(tx.manager, [event('d-4')]);
    release();
    await sweeper;
    const left = await ids();
    expect(left).not.toContain(first[0]!.id);
    expect(left).not.toContain(first[1]!.id);
    expect(left).toContain(first[2]!.id); // the sweeper's, untouched
    expect(left).toContain(second[0]!.id);

    // A write that fails keeps its deletes for later; no write comes, so the idle delete takes them.
    await new Promise((r) => setTimeout(r, OUTBOX_DELETE_IDLE_MS + 50));
    outbox.deleteSoon([second[0]!.id]);
    await expect(
      tx.run(async (em) =>
        outbox.add(em, [{ subject: 'events.job.log', payload: { eventId: 'd-5', bad: '\u0000' } as never }]),
      ),
    ).rejects.toThrow();
    await new Promise((r) => setTimeout(r, OUTBOX_DELETE_IDLE_MS + 200));
    expect(await ids()).not.toContain(second[0]!.id);
    await outbox.delete([first[2]!.id]);
  });
});
