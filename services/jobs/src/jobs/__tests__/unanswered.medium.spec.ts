import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { localTime, PACING_LOG, standardPolicy, type SendingPolicy } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../../events/job-logs.repository.js';
import { SendsTodayService } from '../sends-today.service.js';
import { PolicyRepository } from '../../policy/policy.repository.js';
import { LaneQueue, type NextStep, type PlannedSend } from '../../queue/lane-queue.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { UnansweredRepository } from '../../results/unanswered.repository.js';

/**
 * The unanswered budget in-process on a real Postgres, through the lane queue: each send to a number
 * that never replied is counted on its day by the statement that records it, a first reply takes the
 * number's sends back off, and a policy's limit makes campaigns wait with a plain reason.
 */
describe('unanswered budget (in-process, real Postgres)', () => {
  let app: InProcess;
  let queue: LaneQueue;
  const planned = (step: NextStep): PlannedSend => {
    if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
    return step.send;
  };
  const sent = () => ({ kind: 'sent' as const, at: new Date(), duplicate: false, messageId: `m-${randomUUID()}` });

  beforeAll(async () => {
    app = await startInProcess({ SEND_DELAY_MS: '0' }, [UnansweredRepository, SendsTodayService]);
    queue = app.get(LaneQueue);
  }, 60_000);
  afterAll(() => app?.close());

  const setPolicy = (userId: string, policy: Partial<SendingPolicy>) =>
    app.get(PolicyRepository).save(app.db.manager, userId, { ...standardPolicy(0), ...policy });
  const today = (userId: string) => app.get(SendsTodayService).of(userId);
  const replied = (userId: string, phone: string) =>
    app.get(Transactions).run((em) => app.get(UnansweredRepository).replied(em, userId, phone, new Date()));
  async function sendAll(userId: string, worker: string, count: number): Promise<void> {
    await queue.heartbeat(worker);
    expect(await queue.claim(worker, 10, 0, userId)).toHaveLength(1);
    for (let i = 0; i < count; i++) await queue.finish(worker, planned(await queue.next(worker, userId)), sent());
  }

  it('counts sends to numbers that never replied, this month and in 30 days; a first reply takes its sends off', async () => {
    const userId = `user_${randomUUID()}`;
    await setPolicy(userId, {});
    // 91300001 replied before this campaign: its message is not an unanswered one.
    await replied(userId, '91300001');
    await app.seedJob(userId, ['91300001', '91300002', '91300003']);
    await sendAll(userId, 'w-count', 3);
    expect((await today(userId)).unanswered).toEqual({ month: 2, last30Days: 2, limit: null });
    const day = localTime(new Date(), standardPolicy(0).timeZone).date;
    const [lane] = await rows<{ unanswered: Record<string, number> }>(
      app.db.manager,
      `SELECT unanswered FROM lanes WHERE user_id = $1`,
      [userId],
    );
    expect(lane!.unanswered).toEqual({ [day]: 2 });

    await replied(userId, '91300002');
    expect((await today(userId)).unanswered).toMatchObject({ month: 1, last30Days: 1 });
    // Its second reply, or a reply from a number never sent to, changes nothing.
    await replied(userId, '91300002');
    await replied(userId, '91399999');
    expect((await today(userId)).unanswered).toMatchObject({ month: 1, last30Days: 1 });
    // Another account's counts are its own.
    expect((await today(`user_${randomUUID()}`)).unanswered).toEqual({ month: 0, last30Days: 0, limit: null });
  });

  it('at the policy limit the campaign waits, saying why in plain words', async () => {
    const userId = `user_${randomUUID()}`;
    await setPolicy(userId, { unansweredLimit: 2 });
    const jobId = await app.seedJob(userId, ['91400001', '91400002', '91400003']);
    await sendAll(userId, 'w-limit', 2);
    expect((await today(userId)).unanswered).toEqual({ month: 2, last30Days: 2, limit: 2 });
    expect((await queue.next('w-limit', userId)).kind).toBe('idle');
    const job = (await app.get(JobsRepository).get(app.db.manager, jobId))!;
    expect([job.status, job.pausedReason, job.sent]).toEqual(['paused', 'unanswered', 2]);
    const logs = (await app.get(JobLogsRepository).page(app.db.manager, jobId, new Date(0), 100)).map((l) => l.message);
    const line = logs.find((l) => l.startsWith('Too many messages nobody answered'));
    expect(line).toBeDefined();
    expect(line).toContain(PACING_LOG.unansweredLimitReached(2, 2, '').slice(0, 60));
  });
});
