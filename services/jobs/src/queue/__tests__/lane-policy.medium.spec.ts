import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PACING_LOG } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { sleep } from '@bns/testing';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../../events/job-logs.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { Policies } from '../../policy/policy.service.js';
import { LaneQueue, type NextStep, type PlannedSend } from '../lane-queue.js';
import { LaneRepository } from '../lane.repository.js';

describe('LaneQueue under a sending policy (in-process, real Postgres)', () => {
  let app: InProcess;
  let queue: LaneQueue;
  let n = 0;
  const user = () => `user_policy_${++n}`;

  beforeAll(async () => {
    app = await startInProcess({
      SEND_DELAY_MS: '0',
      POLICY_MIN_DELAY_MS: '0',
      JOB_BACKOFF_MS: '300,600',
      JOB_RETRY_BASE_MS: '10',
    });
    queue = app.get(LaneQueue);
    await queue.heartbeat('w');
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  const em = () => app.get(Transactions).manager;
  /** As jobs.policy.set does: store, and wake the account's lane so the change applies now. */
  const setPolicy = (userId: string, update: object) =>
    app.get(Transactions).run(async (e) => {
      await app.get(Policies).update(e, userId, update);
      await app.get(LaneRepository).wake(e, userId);
    });
  const jobOf = (jobId: string) => app.get(JobsRepository).get(em(), jobId);
  const logsOf = async (jobId: string) =>
    (await app.get(JobLogsRepository).page(em(), jobId, new Date(0), 100)).map((l) => l.message);
  const sent = () => ({ kind: 'sent' as const, at: new Date(), duplicate: false, messageId: 'm' });
  const planned = (step: NextStep): PlannedSend => {
    if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
    return step.send;
  };
  /** The lane's next send, once its (short) slot has come. */
  const nextSend = async (userId: string): Promise<PlannedSend> => {
    for (;;) {
      const step = await queue.next('w', userId);
      if (step.kind !== 'wait' || step.waitMs > 2000) return planned(step);
      await sleep(step.waitMs + 2);
    }
  };

  it('a reached daily cap pauses the job until the next local midnight and hands the lane back', async () => {
    const userId = user();
    await setPolicy(userId, { delayMs: 0, dailyCap: 2 });
    const jobId = await app.seedJob(userId, ['91000001', '91000002', '91000003']);
    await queue.claim('w', 10, 0, userId);
    for (let i = 0; i < 2; i++) await queue.finish('w', await nextSend(userId), sent());
    await sleep(5);
    expect((await queue.next('w', userId)).kind).toBe('idle');
    const job = await jobOf(jobId);
    expect(job).toMatchObject({ status: 'paused', pausedReason: 'daily_cap', sent: 2 });
    expect(job!.resumesAt!.getTime()).toBeGreaterThan(Date.now());
    expect((await queue.held('w')).map((h) => h.userId)).not.toContain(userId);
    expect((await logsOf(jobId)).at(-1)).toMatch(/^Daily limit of 2 messages reached/);

    // A higher cap: the lane is due again and the job goes on where it stopped.
    await setPolicy(userId, { dailyCap: 5 });
    expect((await queue.claim('w', 10, 0, userId)).map((c) => c.userId)).toEqual([userId]);
    const third = await nextSend(userId);
    expect(third.phone).toBe('91000003');
    expect((await logsOf(jobId)).at(-1)).toBe(PACING_LOG.resumed);
    await queue.finish('w', third, sent());
    expect(await jobOf(jobId)).toMatchObject({ status: 'completed', pausedReason: null });
  });

  it('takes a long break after every N messages', async () => {
    const userId = user();
    await setPolicy(userId, { delayMs: 0, pauseEvery: 2, pauseMs: 1000 });
    await app.seedJob(userId, ['92000001', '92000002', '92000003']);
    await queue.claim('w', 10, 0, userId);
    await queue.finish('w', await nextSend(userId), sent());
    const second = await queue.finish('w', await nextSend(userId), sent());
    expect(second.kind === 'wait' && second.waitMs).toBeGreaterThan(900);
    expect((await queue.next('w', userId)).kind).toBe('wait');
    // The break is the sent recipient's (its planned gap), not written on the lane: a worker taking the
    // lane over reads it there too.
    expect((await queue.held('w')).find((h) => h.userId === userId)!.dueInMs).toBeGreaterThan(900);
  });

  it('WhatsApp pushback: the recipient waits without a retry, the job shows rate_limited, the next hit waits longer', async () => {
    const userId = user();
    await setPolicy(userId, { delayMs: 0 });
    const jobId = await app.seedJob(userId, ['93000001', '93000002']);
    await queue.claim('w', 10, 0, userId);
    const a = await nextSend(userId);
    const first = await queue.finish('w', a, { kind: 'rate_limited', error: 'rate-overlimit' });
    expect(first.kind === 'wait' && first.waitMs).toBeGreaterThan(200);
    expect(await jobOf(jobId)).toMatchObject({ status: 'paused', pausedReason: 'rate_limited' });
    await sleep(first.kind === 'wait' ? first.waitMs + 20 : 0);
    const again = await nextSend(userId);
    expect(again).toMatchObject({ phone: '93000001', attempts: 0 });
    const second = await queue.finish('w', again, { kind: 'rate_limited', error: 'rate-overlimit' });
    // Twice the first wait (measured the same way, so a loaded machine's delay does not tip it).
    expect(second.kind === 'wait' && second.waitMs).toBeGreaterThan(first.kind === 'wait' ? first.waitMs * 1.5 : 450);
    expect((await logsOf(jobId)).filter((m) => m.startsWith('WhatsApp is limiting'))).toHaveLength(2);
  });

  it('engine failures in a row (JOB_BACKOFF_AFTER_FAILURES = 3) are taken as pushback', async () => {
    const userId = user();
    await setPolicy(userId, { delayMs: 0 });
    const jobId = await app.seedJob(userId, ['95000001', '95000002']);
    await queue.claim('w', 10, 0, userId);
    const failure = { kind: 'transient' as const, error: 'engine trouble', engine: true };
    await queue.finish('w', await nextSend(userId), failure);
    await queue.finish('w', await nextSend(userId), failure);
    expect((await jobOf(jobId))?.status).toBe('running');
    await queue.finish('w', await nextSend(userId), failure);
    expect(await jobOf(jobId)).toMatchObject({ status: 'paused', pausedReason: 'rate_limited', failed: 0 });
  });

  it('a job paused by the user steps aside; a scheduled one puts the lane to sleep until its time', async () => {
    const userId = user();
    await setPolicy(userId, { delayMs: 0 });
    const paused = await app.seedJob(userId, ['94000001']);
    await app.get(Transactions).run((e) => app.get(JobsRepository).pause(e, paused, 'user', null));
    await queue.claim('w', 10, 0, userId);
    expect((await queue.next('w', userId)).kind).toBe('idle');
    expect((await jobOf(paused))?.status).toBe('paused');

    // Far enough ahead that a loaded machine still claims before it; then sleep until just after it.
    const startAt = new Date(Date.now() + 1500);
    const later = await app.seedJob(userId, ['94000002'], 'Later', startAt);
    await queue.claim('w', 10, 0, userId);
    expect((await queue.next('w', userId)).kind).toBe('idle');
    expect(await queue.claim('w', 10, 0)).not.toContainEqual(expect.objectContaining({ userId }));
    await sleep(Math.max(0, startAt.getTime() - Date.now()) + 50);
    expect((await queue.claim('w', 10, 0)).map((c) => c.userId)).toContain(userId);
    const step = await nextSend(userId);
    expect(step).toMatchObject({ jobId: later, phone: '94000002' });
    expect((await jobOf(later))?.status).toBe('running');
  });
});
