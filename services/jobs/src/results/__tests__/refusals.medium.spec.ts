import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JOB_MESSAGES, PACING_LOG, PAUSED_REASON_TEXT, SESSION_MESSAGES } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { LaneStepRepository } from '../../queue/lane-step.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { foldOf } from '../receipts.consumer.js';
import { Refusals } from '../refusals.js';
import { RefusalsRepository } from '../refusals.repository.js';
import { ResultsRepository } from '../results.repository.js';

const phones = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));

/**
 * Accepted is not delivered, in-process on a real Postgres: a refusal from sessions turns a sent
 * recipient into a failed one (report and counts), and two in a row to never-talked-to numbers pause
 * the account's campaigns until the user resumes them.
 */
describe('Refusals (in-process, real Postgres)', () => {
  let ip: InProcess;
  let tx: Transactions;
  let refusals: Refusals;
  let results: ResultsRepository;

  beforeAll(async () => {
    ip = await startInProcess({}, [ResultsRepository, RefusalsRepository, Refusals]);
    tx = ip.get(Transactions);
    refusals = ip.get(Refusals);
    results = ip.get(ResultsRepository);
  }, 60_000);
  afterAll(() => ip?.close());

  /** A running job whose first `sent` recipients went out (counted sent, as a send records them). */
  const sentJob = async (userId: string, list: string[], sent = list.length) => {
    const jobId = await ip.seedJob(userId, list);
    const steps = ip.get(LaneStepRepository);
    await tx.run(async (em) => {
      for (let seq = 1; seq <= sent; seq++) {
        await steps.markSending(em, jobId, seq);
        await steps.markSent(em, jobId, seq, new Date(Date.now() - 1000));
      }
      await em.query(`UPDATE jobs SET status = 'running', started_at = now(), sent = $2 WHERE id = $1`, [jobId, sent]);
    });
    return jobId;
  };
  const refuse = (userId: string, jobId: string, phone: string, error = SESSION_MESSAGES.sendRefusedAfterAccept) =>
    tx.run((em) => refusals.apply(em, { userId, jobId, phone, at: new Date(), error }));
  const jobOf = (jobId: string) => ip.get(JobsRepository).get(tx.manager, jobId);
  const logsOf = async (jobId: string) =>
    (await tx.manager.query(`SELECT message FROM job_logs WHERE job_id = $1 ORDER BY id`, [jobId])).map(
      (r: { message: string }) => r.message,
    );

  it('reads a refusal from the sessions event; a plain failed, or one without a job, is not one', () => {
    const event = {
      eventId: 'e1',
      userId: 'u',
      at: new Date().toISOString(),
      jobId: '0190a1b2-0000-7000-8000-000000000001',
      idempotencyKey: 'k',
      recipient: '85291234567',
      status: 'failed',
      content: 'Hi',
      error: SESSION_MESSAGES.sendNotConfirmed,
      refused: true,
    };
    expect(foldOf('events.message.status', event)).toMatchObject({
      kind: 'refused',
      phone: '91234567',
      error: SESSION_MESSAGES.sendNotConfirmed,
    });
    expect(foldOf('events.message.status', { ...event, refused: undefined })).toBeUndefined();
    expect(foldOf('events.message.status', { ...event, jobId: 'welcome' })).toBeUndefined();
    expect(foldOf('events.message.status', { ...event, error: undefined })).toMatchObject({
      error: SESSION_MESSAGES.sendRefusedAfterAccept,
    });
  });

  it('turns a refused send from sent into failed with its reason, once; a delivered one stays delivered', async () => {
    const list = phones(3, 71_000_000);
    const jobId = await sentJob('user-r1', list);
    await tx.run((em) =>
      results.foldReceipts(em, [{ userId: 'user-r1', jobId, phone: list[2]!, kind: 'delivered', at: new Date() }]),
    );
    const published = await refuse('user-r1', jobId, list[0]!);
    expect(published.map((r) => r.subject)).toEqual(expect.arrayContaining(['events.job.log', 'events.job.progress']));
    // The same event again (a redelivery), a delivered recipient, another user's claim: nothing more.
    expect(await refuse('user-r1', jobId, list[0]!)).toEqual([]);
    expect(await refuse('user-r1', jobId, list[2]!)).toEqual([]);
    expect(await refuse('user-x', jobId, list[1]!)).toEqual([]);

    expect(await jobOf(jobId)).toMatchObject({ sent: 2, failed: 1, status: 'running' });
    const report = await results.page(tx.manager, jobId, 0, 10);
    expect(report.map((r) => [r.phone, r.status, r.error])).toEqual([
      [list[0], 'failed', SESSION_MESSAGES.sendRefusedAfterAccept],
      [list[1], 'sent', null],
      [list[2], 'delivered', null],
    ]);
    expect(await logsOf(jobId)).toContain(
      JOB_MESSAGES.messageFailed(list[0]!, SESSION_MESSAGES.sendRefusedAfterAccept),
    );
  });

  it('pauses every open campaign of the account after two refusals in a row to new contacts; only the user resumes', async () => {
    const userId = 'user-r2';
    const list = phones(4, 72_000_000);
    const jobId = await sentJob(userId, list, 3);
    const queued = await ip.seedJob(userId, phones(2, 72_100_000));
    await refuse(userId, jobId, list[0]!);
    expect(await jobOf(jobId)).toMatchObject({ status: 'running', pausedReason: null });
    await refuse(userId, jobId, list[1]!);
    expect(await jobOf(jobId)).toMatchObject({ status: 'paused', pausedReason: 'refused', sent: 1, failed: 2 });
    expect(await jobOf(queued)).toMatchObject({ status: 'paused', pausedReason: 'refused' });
    expect(PAUSED_REASON_TEXT.refused).toBe('WhatsApp is refusing messages to new contacts');
    expect(await logsOf(jobId)).toContain(PACING_LOG.refusingNewContacts(2));
    // The lane does not take a job paused this way: nothing is workable for the account.
    const workable = await tx.manager.query(
      `SELECT count(*)::int AS n FROM jobs WHERE user_id = $1 AND status = 'paused' AND paused_reason = 'refused'`,
      [userId],
    );
    expect(workable[0].n).toBe(2);
    expect(await ip.get(JobsRepository).countAhead(tx.manager, userId)).toBe(0);
  });

  it('does not count refusals to numbers the account talked to, and a delivery in between ends the row', async () => {
    const userId = 'user-r3';
    const known = '73000000';
    const earlier = await sentJob(userId, [known]);
    await tx.run((em) =>
      results.foldReceipts(em, [{ userId, jobId: earlier, phone: known, kind: 'delivered', at: new Date() }]),
    );
    const list = phones(4, 73_000_001);
    const jobId = await sentJob(userId, [known, ...list]);
    await refuse(userId, jobId, known);
    await refuse(userId, jobId, list[0]!);
    expect(await jobOf(jobId)).toMatchObject({ status: 'running', failed: 2 });
    // A message delivered after that refusal: the next refusal starts a new row.
    await new Promise((r) => setTimeout(r, 5));
    await tx.run((em) => refusals.endStreaks(em, [{ userId, at: new Date() }]));
    await refuse(userId, jobId, list[1]!);
    expect(await jobOf(jobId)).toMatchObject({ status: 'running', failed: 3 });
    await refuse(userId, jobId, list[2]!);
    expect(await jobOf(jobId)).toMatchObject({ status: 'paused', pausedReason: 'refused', failed: 4 });
  });
});
