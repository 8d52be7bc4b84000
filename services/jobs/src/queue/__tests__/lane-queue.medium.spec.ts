import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { JOB_MESSAGES, type JobView } from '@bns/contracts';
import { sleep } from '@bns/testing';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../../events/job-logs.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { LaneStepRepository } from '../lane-step.repository.js';
import { LaneQueue, type NextStep, type PlannedSend } from '../lane-queue.js';
import { LaneRepository } from '../lane.repository.js';

const STALE_MS = 400;
const PROGRESS_EVERY_MS = 2000;

describe('LaneQueue against a real Postgres (in-process)', () => {
  let app: InProcess;
  let queue: LaneQueue;
  let users = 0;
  const user = () => `user_lane_${++users}`;

  beforeAll(async () => {
    app = await startInProcess({
      SEND_DELAY_MS: '0',
      // Steps taken on their slot, not ahead of it (see "ahead of its slot" below).
      JOBS_SEND_LEAD_MS: '0',
      JOB_RETRY_BASE_MS: '50',
      JOB_MAX_RETRIES: '1',
      JOBS_HEARTBEAT_MS: '100',
      JOBS_WORKER_STALE_MS: String(STALE_MS),
      // Long enough that two back-to-back outcomes fall within it on a loaded machine.
      JOBS_PROGRESS_EVERY_MS: String(PROGRESS_EVERY_MS),
    });
    queue = app.get(LaneQueue);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const em = () => app.get(Transactions).manager;
  const jobOf = (jobId: string) => app.get(JobsRepository).get(em(), jobId);
  const logsOf = async (jobId: string) =>
    (await app.get(JobLogsRepository).page(em(), jobId, new Date(0), 100)).map((l) => l.message);
  const sent = (at = new Date()) => ({ kind: 'sent' as const, at, duplicate: false, messageId: 'm1' });

  function planned(step: NextStep): PlannedSend {
    if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
    return step.send;
  }

  it('names the recipient it takes on its lane, writing no recipient row; a second take finds it in flight', async () => {
    const userId = user();
    const jobId = await app.seedJob(userId, ['91234567', '61234567']);
    await queue.heartbeat('w-n');
    await queue.claim('w-n', 10, 0, userId);
    const recipients = app.get(LaneStepRepository);
    const take = { jobId, message: 'hi', userId, paceMs: 0 };
    // This transaction's own row counts, before they reach pg_stat_user_tables.
    const updates = async (m: EntityManager) =>
      (
        await m.query(
          `SELECT n_tup_upd::int AS upd FROM pg_stat_xact_user_tables WHERE schemaname = 'jobs' AND relname = 'job_recipients'`,
        )
      )[0] as { upd: number };
    const mark = async () =>
      (await em().query(`SELECT sending_job, sending_seq FROM lanes WHERE user_id = $1`, [userId]))[0];
    const taken = await app.get(Transactions).run(async (m) => {
      const before = await updates(m);
      const [recipient] = await recipients.takeFirstOpenMany(m, [take], 30);
      const after = await updates(m);
      return { recipient, upd: after.upd - before.upd };
    });
    expect(taken.recipient).toMatchObject({ seq: 1, phone: '91234567', state: 'pending', passedOver: false });
    expect(taken.upd).toBe(0);
    expect(await mark()).toEqual({ sending_job: jobId, sending_seq: 1 });
    // Left in flight (a worker died before its outcome): taken again as such, to go out with the same key.
    const [again] = await app.get(Transactions).run((m) => recipients.takeFirstOpenMany(m, [take], 30));
    expect(again).toMatchObject({ seq: 1, state: 'sending' });
    // Its outcome clears the mark; a second record of it (a worker that lost the lane) changes nothing.
    expect(await recipients.markSent(em(), jobId, 1, new Date())).toBe(true);
    expect(await mark()).toEqual({ sending_job: null, sending_seq: null });
    expect(await recipients.markSent(em(), jobId, 1, new Date())).toBe(false);
    expect(
      await em().query(`SELECT seq, state, in_flight FROM job_recipients WHERE job_id = $1 ORDER BY seq`, [jobId]),
    ).toEqual([
      { seq: 1, state: 'sent', in_flight: false },
      { seq: 2, state: 'pending', in_flight: false },
    ]);
  });

  it('a take that moves its lane to another job while the lane names a send in flight leaves that mark on its row', async () => {
    const userId = user();
    const first = await app.seedJob(userId, ['91234567', '61234567']);
    const second = await app.seedJob(userId, ['51234567']);
    await queue.heartbeat('w-c');
    await queue.claim('w-c', 10, 0, userId);
    const recipients = app.get(LaneStepRepository);
    const takeOf = (jobId: string) =>
      app
        .get(Transactions)
        .run((m) => recipients.takeFirstOpenMany(m, [{ jobId, message: 'hi', userId, paceMs: 0 }], 30));
    await takeOf(first);
    // Its worker died mid-send; a job that goes ahead (a notification) is taken next.
    const [other] = await takeOf(second);
    expect(other).toMatchObject({ seq: 1, phone: '51234567', state: 'pending' });
    expect(await em().query(`SELECT sending_job, sending_seq FROM lanes WHERE user_id = $1`, [userId])).toEqual([
      { sending_job: second, sending_seq: 1 },
    ]);
    expect(
      await em().query(`SELECT seq, in_flight FROM job_recipients WHERE job_id = $1 ORDER BY seq`, [first]),
    ).toEqual([
      { seq: 1, in_flight: true },
      { seq: 2, in_flight: false },
    ]);
    // Both are in flight: each goes again as such, and each outcome records once.
    expect(await recipients.markSent(em(), second, 1, new Date())).toBe(true);
    const [again] = await takeOf(first);
    expect(again).toMatchObject({ seq: 1, state: 'sending' });
    expect(await recipients.markSent(em(), first, 1, new Date())).toBe(true);
    expect(await recipients.markSent(em(), first, 1, new Date())).toBe(false);
  });

  it('reports a job sending without pause at most every JOBS_PROGRESS_EVERY_MS: its start, its first send, then the whole counts, and always its end', async () => {
    const userId = user();
    const jobId = await app.seedJob(userId, ['91000001', '91000002', '91000003', '91000004', '91000005']);
    await queue.heartbeat('w-p');
    await queue.claim('w-p', 10, 0, userId);
    const reports: Array<{ status: string; sent: number }> = [];
    const heard = (rows: readonly { subject: string; payload: unknown }[]) => {
      for (const r of rows) {
        if (r.subject !== 'events.job.progress') continue;
        const p = r.payload as { jobId: string; status: string; progress: { sent: number } };
        expect(p.jobId).toBe(jobId);
        reports.push({ status: p.status, sent: p.progress.sent });
      }
    };
    let step: NextStep | undefined = await queue.next('w-p', userId);
    heard(step.published);
    const finish = async () => {
      // The lane is due again at once (delay 0): the next step shares the outcome's transaction.
      const done = await queue.finish('w-p', planned(step!), sent(), { thenNext: true });
      heard(done.published);
      step = done.next;
      if (step) heard(step.published);
    };
    await finish(); // the first send is reported
    await finish(); // soon after that report: left to a later one
    await finish();
    await sleep(PROGRESS_EVERY_MS + 100);
    await finish(); // a while on: reported, with every send so far
    await finish(); // the last: the end is always reported
    expect(reports).toEqual([
      { status: 'running', sent: 0 },
      { status: 'running', sent: 1 },
      { status: 'running', sent: 4 },
      { status: 'completed', sent: 5 },
    ]);
    // Every send still has its log line and message status.
    expect((await logsOf(jobId)).filter((m) => m.startsWith('Message sent to'))).toHaveLength(5);
  });

  it('gives a lane to one worker only, even when two claim at once', async () => {
    const userId = user();
    await app.seedJob(userId, ['91234567']);
    await queue.heartbeat('w-a');
    await queue.heartbeat('w-b');
    const [a, b] = await Promise.all([queue.claim('w-a', 10, 0, userId), queue.claim('w-b', 10, 0, userId)]);
    expect([...a, ...b].map((c) => c.userId)).toEqual([userId]);
    const holder = a.length === 1 ? 'w-a' : 'w-b';
    const other = holder === 'w-a' ? 'w-b' : 'w-a';
    // The other worker can neither take it again nor step on it.
    expect(await queue.claim(other, 10, 0, userId)).toEqual([]);
    expect((await queue.next(other, userId)).kind).toBe('lost');
    expect((await queue.next(holder, userId)).kind).toBe('send');
    expect((await queue.held(holder)).map((h) => h.userId)).toContain(userId);
  });

  it('takes over the lane of a holder that stopped beating, and resends its message in flight with the same key', async () => {
    const userId = user();
    const jobId = await app.seedJob(userId, ['91234567', '61234567']);
    await queue.heartbeat('w-dead');
    expect(await queue.claim('w-dead', 10, 0, userId)).toHaveLength(1);
    const first = planned(await queue.next('w-dead', userId));
    expect(first).toMatchObject({
      jobId,
      seq: 1,
      phone: '91234567',
      resumed: false,
      idempotencyKey: `${jobId}:91234567`,
    });

    // w-dead goes silent with the message in flight; a live worker may not take the lane before the stale time.
    await queue.heartbeat('w-live');
    expect(await queue.claim('w-live', 10, 0, userId)).toEqual([]);
    await sleep(STALE_MS + 200);
    await queue.heartbeat('w-live');
    expect((await queue.claim('w-live', 10, 0, userId)).map((c) => c.userId)).toEqual([userId]);

    const again = planned(await queue.next('w-live', userId));
    expect(again).toMatchObject({
      jobId,
      seq: 1,
      phone: '91234567',
      resumed: true,
      idempotencyKey: first.idempotencyKey,
    });
    // The dead worker's late answer is not recorded: it no longer holds the lane.
    expect((await queue.finish('w-dead', first, sent())).kind).toBe('lost');
    expect((await queue.finish('w-live', again, sent())).kind).toBe('wait');
    // Recording twice applies once.
    await queue.finish('w-live', again, sent());
    expect(await jobOf(jobId)).toMatchObject({ status: 'running', sent: 1, failed: 0 });
  });

  it('records sent, failed and a temporary failure that is retried, then completes the job', async () => {
    const userId = user();
    const jobId = await app.seedJob(userId, ['91234567', '61234567', '51234567']);
    await queue.heartbeat('w-1');
    await queue.claim('w-1', 10, 0, userId);

    const a = planned(await queue.next('w-1', userId));
    const done = await queue.finish('w-1', a, sent());
    expect(done.kind).toBe('wait');
    expect(done.published.map((p) => p.subject)).toEqual([
      'events.job.log',
      'events.message.status',
      'events.job.progress',
    ]);
    expect(done.published.find((p) => p.subject === 'events.message.status')?.payload).toMatchObject({
      jobId,
      recipient: '91234567',
      status: 'sent',
    });

    // Transient: back to pending with a retry warning and the lane pushed back by the retry wait.
    const b = planned(await queue.next('w-1', userId));
    expect(b.phone).toBe('61234567');
    const retried = await queue.finish('w-1', b, { kind: 'transient', error: 'timeout' });
    expect(retried.kind === 'wait' && retried.waitMs).toBeGreaterThan(20);
    expect((await queue.next('w-1', userId)).kind).toBe('wait');
    await sleep(80);
    const bAgain = planned(await queue.next('w-1', userId));
    expect(bAgain).toMatchObject({ phone: '61234567', attempts: 1, resumed: false });
    // Out of retries (JOB_MAX_RETRIES=1): it fails.
    await queue.finish('w-1', bAgain, { kind: 'transient', error: 'timeout' });

    const c = planned(await queue.next('w-1', userId));
    expect(c.phone).toBe('51234567');
    const last = await queue.finish('w-1', c, { kind: 'permanent', error: 'not on WhatsApp' });
    expect(last.published.at(-1)?.payload).toMatchObject({
      jobId,
      status: 'completed',
      progress: { total: 3, sent: 1, failed: 2 },
    });

    expect(await jobOf(jobId)).toMatchObject({ status: 'completed', sent: 1, failed: 2 });
    const lists = JSON.parse(
      (await app.get(JobsRepository).statusOf(em(), userId, jobId, 10))!.resultsJson,
    ) as JobView['results'];
    expect(lists.failedList.map((r) => [r.phoneNumber, r.error])).toEqual([
      ['61234567', 'timeout'],
      ['51234567', 'not on WhatsApp'],
    ]);
    expect(lists.successList.map((r) => r.originalNumber)).toEqual(['91234567']);
    expect(await logsOf(jobId)).toEqual([
      JOB_MESSAGES.jobStarted(3),
      JOB_MESSAGES.messageSent('91234567'),
      JOB_MESSAGES.retrying('61234567', 1, 1, 0),
      JOB_MESSAGES.messageFailed('61234567', 'timeout'),
      JOB_MESSAGES.messageFailed('51234567', 'not on WhatsApp'),
      JOB_MESSAGES.jobCompleted(1, 2),
    ]);
    // Nothing left: the lane goes idle and is handed back.
    expect((await queue.next('w-1', userId)).kind).toBe('idle');
    expect((await queue.held('w-1')).map((h) => h.userId)).not.toContain(userId);
  });

  it('a step that waited for a start holding the lane sees the job the start committed: the lane does not rest with it queued', async () => {
    const userId = user();
    await app.seedJob(userId, ['91000011']);
    await queue.heartbeat('w-r');
    await queue.claim('w-r', 10, 0, userId);
    // The account's only job ends; the lane is still held, and its next step will find no more work.
    expect((await queue.finish('w-r', planned(await queue.next('w-r', userId)), sent())).kind).toBe('wait');

    // A start takes the lane's lock, writes its job and, before it commits, the worker's step waits for that lock.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const started = app.seedJob(userId, ['91000012'], 'Hello', undefined, async () => {
      holding();
      await released;
    });
    await held;
    const step = queue.next('w-r', userId);
    // The lock statement (`LaneRepository.lockMany`), by its start: the view keeps only a query's first 1 KiB.
    const waitingOnLock = async () =>
      (
        await em().query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT r.i, l.holder,%'`,
        )
      )[0].n as number;
    const deadline = Date.now() + 10_000;
    while ((await waitingOnLock()) === 0) {
      if (Date.now() > deadline) throw new Error('the step never waited for the lane lock');
      await sleep(10);
    }
    release();
    const jobId = await started;

    // The step's lock statement could not see the job; it must not put the lane to rest.
    expect((await step).kind).toBe('wait');
    expect(await em().query(`SELECT active, holder FROM lanes WHERE user_id = $1`, [userId])).toEqual([
      { active: true, holder: 'w-r' },
    ]);
    const next = planned(await queue.next('w-r', userId));
    expect(next).toMatchObject({ jobId, phone: '91000012' });
    await queue.finish('w-r', next, sent());
    expect(await jobOf(jobId)).toMatchObject({ status: 'completed', sent: 1 });
  });

  it('keeps the pace: the next send waits for the slot the last one booked', async () => {
    const userId = user();
    await app.seedJob(userId, ['91234567', '61234567']);
    await queue.heartbeat('w-p');
    await queue.claim('w-p', 10, 0, userId);
    const a = planned(await queue.next('w-p', userId));
    // A message that really left now pushes the next slot to now + pace.
    const paced = { ...a, paceMs: 300 };
    const done = await queue.finish('w-p', paced, sent());
    expect(done.kind === 'wait' && done.waitMs).toBeGreaterThan(200);
    const early = await queue.next('w-p', userId);
    expect(early.kind).toBe('wait');
    await sleep(early.kind === 'wait' ? early.waitMs + 20 : 0);
    expect(planned(await queue.next('w-p', userId)).phone).toBe('61234567');
  });

  it('pauses a job whose account is unlinked and resumes it with the next success', async () => {
    const userId = user();
    const jobId = await app.seedJob(userId, ['91234567']);
    await queue.heartbeat('w-u');
    await queue.claim('w-u', 10, 0, userId);
    const a = planned(await queue.next('w-u', userId));
    const paused = await queue.finish('w-u', a, { kind: 'unlinked', error: 'not linked' });
    expect(paused.kind === 'wait' && paused.waitMs).toBeGreaterThan(500);
    expect((await jobOf(jobId))?.unlinkedSince).not.toBeNull();
    await sleep(paused.kind === 'wait' ? paused.waitMs + 20 : 0);
    const again = planned(await queue.next('w-u', userId));
    expect(again).toMatchObject({ phone: '91234567', wasUnlinked: true });
    await queue.finish('w-u', again, sent());
    expect(await jobOf(jobId)).toMatchObject({ status: 'completed', unlinkedSince: null });
    expect(await logsOf(jobId)).toEqual([
      JOB_MESSAGES.jobStarted(1),
      JOB_MESSAGES.waitingForLink,
      JOB_MESSAGES.resumed,
      JOB_MESSAGES.messageSent('91234567'),
      JOB_MESSAGES.jobCompleted(1, 0),
    ]);
  });
});

describe('LaneQueue: a step taken ahead of its slot (JOBS_SEND_LEAD_MS)', () => {
  const DELAY_MS = 600;
  const LEAD_MS = 300;
  let app: InProcess;
  let queue: LaneQueue;

  beforeAll(async () => {
    app = await startInProcess({ SEND_DELAY_MS: String(DELAY_MS), JOBS_SEND_LEAD_MS: String(LEAD_MS) });
    queue = app.get(LaneQueue);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const planned = (step: NextStep): PlannedSend => {
    if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
    return step.send;
  };
  const stateOf = async (jobId: string, seq: number) =>
    (
      await app.get(Transactions).manager.query(
        `SELECT CASE WHEN in_flight OR EXISTS (SELECT 1 FROM lanes l WHERE l.sending_job = r.job_id AND l.sending_seq = r.seq)
                       THEN 'in flight' ELSE state END AS state FROM job_recipients r WHERE job_id = $1 AND seq = $2`,
        [jobId, seq],
      )
    )[0]?.state;

  it('waits while the slot is further than the lead, then takes the send early and says when it is due; the next slot is booked after that one', async () => {
    const userId = 'user_lead_1';
    const jobId = await app.seedJob(userId, ['91234567', '61234567', '51234567']);
    await queue.heartbeat('w-1');
    await queue.claim('w-1', 10, 0, userId);

    const first = planned(await queue.next('w-1', userId));
    expect(first.dueAt).toBeLessThanOrEqual(performance.now());
    const done = await queue.finish(
      'w-1',
      first,
      { kind: 'sent', at: new Date(), duplicate: false, messageId: 'm1' },
      { thenNext: true },
    );
    // The slot is a whole gap away (more than the lead): nothing is taken yet.
    expect(done.kind === 'wait' && done.next).toBeUndefined();
    const early = await queue.next('w-1', userId);
    expect(early.kind === 'wait' && early.waitMs).toBeGreaterThan(LEAD_MS);

    // Inside the lead: the recipient is taken (marked in flight) before its slot, and due on the slot.
    await sleep(DELAY_MS - LEAD_MS + 100);
    const second = planned(await queue.next('w-1', userId));
    const dueIn = second.dueAt - performance.now();
    expect(dueIn).toBeGreaterThan(0);
    expect(dueIn).toBeLessThanOrEqual(LEAD_MS);
    expect(second.phone).toBe('61234567');
    expect(await stateOf(jobId, second.seq)).toBe('in flight');
    // The following slot counts from this send's slot, not from when it was taken.
    const after = await queue.next('w-1', userId);
    expect(after.kind).toBe('wait');
    expect(after.kind === 'wait' && after.waitMs).toBeGreaterThan(DELAY_MS + dueIn - 50);
  });

  it('"finish" takes the next step in the same transaction when the lane is due again within the lead', async () => {
    const userId = 'user_lead_2';
    await app.seedJob(userId, ['91234567', '61234567']);
    await queue.heartbeat('w-1');
    await queue.claim('w-1', 10, 0, userId);

    const first = planned(await queue.next('w-1', userId));
    // The send took long: its slot's gap has mostly passed by the time its outcome is recorded.
    await sleep(DELAY_MS - LEAD_MS + 100);
    const done = await queue.finish(
      'w-1',
      first,
      { kind: 'sent', at: new Date(Date.now() - DELAY_MS), duplicate: false, messageId: 'm1' },
      { thenNext: true },
    );
    const next = planned(done.next!);
    expect(next.phone).toBe('61234567');
    expect(next.dueAt - performance.now()).toBeGreaterThan(0);
    expect(next.dueAt - performance.now()).toBeLessThanOrEqual(LEAD_MS);
  });

  it('a start or resume brings forward a lane asleep until a later scheduled start, to its paced slot and not before', async () => {
    const userId = 'user_lead_3';
    const inAnHour = new Date(Date.now() + 3_600_000);
    await app.seedJob(userId, ['91234567']);
    await app.seedJob(userId, ['61234567'], 'Later', inAnHour);
    await queue.heartbeat('w-1');
    await queue.claim('w-1', 10, 0, userId);
    const lanes = app.get(LaneRepository);
    const slotOf = async () =>
      (
        await app
          .get(Transactions)
          .manager.query(`SELECT next_send_at AS "next", paced_at AS "paced" FROM lanes WHERE user_id = $1`, [userId])
      )[0] as { next: Date; paced: Date };

    const first = planned(await queue.next('w-1', userId));
    const sentAt = new Date();
    await queue.finish('w-1', first, { kind: 'sent', at: sentAt, duplicate: false, messageId: 'm1' });
    const pacedSlot = sentAt.getTime() + DELAY_MS;
    // Inside the lead: the first job is complete, and nothing is workable before the scheduled one.
    await sleep(DELAY_MS - LEAD_MS + 50);
    expect((await queue.next('w-1', userId)).kind).toBe('idle');
    expect((await slotOf()).next.getTime()).toBe(inAnHour.getTime());

    // A job to send now: due at the paced slot, not in an hour, and not at once either.
    await app.seedJob(userId, ['51234567']);
    let slot = await slotOf();
    expect(Math.abs(slot.next.getTime() - pacedSlot)).toBeLessThan(50);
    expect(slot.paced.getTime()).toBe(slot.next.getTime());

    // The same for a resume (wake) of a lane put to sleep.
    await app.get(Transactions).run((em) => lanes.sleep(em, userId, inAnHour));
    await app.get(Transactions).run((em) => lanes.wake(em, userId));
    slot = await slotOf();
    expect(slot.next.getTime()).toBeGreaterThanOrEqual(Math.min(pacedSlot, Date.now()) - 50);
    expect(slot.next.getTime()).toBeLessThan(Date.now() + DELAY_MS);

    // A scheduled start earlier than the one the lane sleeps for brings it forward to that start.
    await app.get(Transactions).run((em) => lanes.sleep(em, userId, inAnHour));
    const inHalfAnHour = new Date(Date.now() + 1_800_000);
    await app.seedJob(userId, ['41234567'], 'Sooner', inHalfAnHour);
    expect((await slotOf()).next.getTime()).toBe(inHalfAnHour.getTime());
  });
});
