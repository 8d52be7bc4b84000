import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OutboxRepository, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../../jobs/job-logs.repository.js';
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

  it('hands rows left behind to one sweeper at a time and deletes what was published', async () => {
    const tx = app.get(Transactions);
    const outbox = app.get(OutboxRepository);
    const rows = await outbox.add(tx.manager, [
      { subject: 'events.job.log', payload: { eventId: 'e-1' } as never },
      { subject: 'events.job.log', payload: { eventId: 'e-2' } as never },
    ]);
    expect(await outbox.orphans(tx.manager, 60_000, 10)).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    await tx.run(async (a) => {
      const mine = await outbox.orphans(a, 10, 10);
      expect(mine.map((r) => r.id)).toEqual(expect.arrayContaining(rows.map((r) => r.id)));
      // Another replica's sweep skips the locked rows.
      expect(await tx.run((b) => outbox.orphans(b, 10, 10))).toEqual([]);
      await outbox.delete([rows[0]!.id], a);
    });
    const left = (await outbox.orphans(tx.manager, 10, 100)).map((r) => r.id);
    expect(left).toContain(rows[1]!.id);
    expect(left).not.toContain(rows[0]!.id);
  });
});
