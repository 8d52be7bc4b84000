import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sleep, startSystem, type System } from '@bns/testing';
import { isFinished, jobOf, numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const DELAY_MS = 1500;
/** Wide on purpose: each next send is prepared (taken, marked sending) a whole second before its slot. */
const LEAD_MS = 1000;
const POLL_MS = 1000;

/**
 * A send prepared ahead of its slot (JOBS_SEND_LEAD_MS) still obeys a cancel, a pause or the
 * recipient's opt-out that comes before the slot: it is withheld, and its recipient waits (is sent
 * after a resume, exactly once, or skipped once it opted out).
 */
describe('sends prepared ahead of their slot (real NATS, Postgres, sessions simulator)', () => {
  let sys: System;
  let ann: User;
  let bob: User;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
      // One account per poll, a poll a second: many accounts due at one moment must still all be taken in time.
      serviceEnv: {
        jobs: {
          SEND_DELAY_MS: String(DELAY_MS),
          JOBS_SEND_LEAD_MS: String(LEAD_MS),
          JOBS_CLAIM_BATCH: '1',
          JOBS_POLL_MS: String(POLL_MS),
        },
      },
    });
    [ann, bob] = await Promise.all([
      signInLinked(sys.gateway.url, 'ann@example.com'),
      signInLinked(sys.gateway.url, 'bob@example.com'),
    ]);
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    bob?.tab.close();
    await sys?.stop();
  });

  /** Waits until the next send of the job is prepared but not due: past the lead, before the slot. */
  async function insidePreparedWindow(user: User, jobId: string): Promise<void> {
    const first = (await outboxOf(user, jobId))[0]!;
    const target = Date.parse(first.at) + DELAY_MS - LEAD_MS + 300;
    await sleep(Math.max(0, target - Date.now()));
    expect(Date.now()).toBeLessThan(Date.parse(first.at) + DELAY_MS - 100);
  }

  it('a cancel between the preparation and the slot withholds the prepared send; another user is not affected', async () => {
    const jobId = await startJob(ann, { message: 'Cancel me', phoneNumbers: numbers(5, 91_000_000) });
    const bobsJob = await startJob(bob, { message: 'Keep going', phoneNumbers: numbers(3, 92_000_000) });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
    await insidePreparedWindow(ann, jobId);

    const res = await ann.client.post(`/cancel-job/${jobId}`);
    expect(res.status).toBe(200);
    expect(res.body.job.status).toBe('cancelled');
    await sleep(DELAY_MS * 2);

    expect((await outboxOf(ann, jobId)).map((m) => m.to)).toEqual(['91000000']);
    const after = await jobOf(ann, jobId);
    expect(after).toMatchObject({ status: 'cancelled', progress: { total: 5, sent: 1, failed: 0 } });
    expect(after.results.failedList).toEqual([]);

    const bobs = await waitForJob(bob, bobsJob, isFinished, 20_000);
    expect(bobs).toMatchObject({ status: 'completed', progress: { sent: 3 } });
    expect((await outboxOf(bob, bobsJob)).map((m) => m.to)).toEqual(numbers(3, 92_000_000));
  }, 60_000);

  it('a pause there withholds it too; after the resume every recipient is sent exactly once, the gap kept', async () => {
    const jobId = await startJob(ann, { message: 'Pause me', phoneNumbers: numbers(3, 93_000_000) });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
    await insidePreparedWindow(ann, jobId);

    expect((await ann.client.post(`/pause-job/${jobId}`)).status).toBe(200);
    await sleep(DELAY_MS * 2);
    expect((await outboxOf(ann, jobId)).length).toBe(1);
    expect((await jobOf(ann, jobId)).status).toBe('paused');

    expect((await ann.client.post(`/resume-job/${jobId}`)).status).toBe(200);
    const done = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(done).toMatchObject({ status: 'completed', progress: { total: 3, sent: 3, failed: 0 } });
    const sent = await outboxOf(ann, jobId);
    expect(sent.map((m) => m.to)).toEqual(numbers(3, 93_000_000));
    for (let i = 1; i < sent.length; i++)
      expect(Date.parse(sent[i]!.at) - Date.parse(sent[i - 1]!.at)).toBeGreaterThanOrEqual(DELAY_MS);
  }, 60_000);

  it('the next recipient opting out there withholds its send: it is skipped, the rest go on, the gap kept', async () => {
    const phones = numbers(3, 94_000_000);
    const jobId = await startJob(ann, { message: 'Opt me out', phoneNumbers: phones });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
    await insidePreparedWindow(ann, jobId);

    // Bob putting the same number on his own list changes nothing for Ann.
    expect((await bob.client.post(`/api/opt-outs/${bob.userId}`, { phoneNumbers: [phones[1]] })).status).toBe(200);
    const add = await ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: [phones[1]] });
    expect(add.body).toEqual({ success: true, added: 1, alreadyListed: 0 });

    const done = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(done).toMatchObject({ status: 'completed', progress: { total: 3, sent: 2, failed: 0, skipped: 1 } });
    const sent = await outboxOf(ann, jobId);
    expect(sent.map((m) => m.to)).toEqual([phones[0], phones[2]]);
    expect(Date.parse(sent[1]!.at) - Date.parse(sent[0]!.at)).toBeGreaterThanOrEqual(DELAY_MS);
  }, 60_000);
  it('accounts scheduled for one moment all send at it, though a poll takes one account (JOBS_CLAIM_BATCH=1) a second', async () => {
    const users = [
      ann,
      bob,
      ...(await Promise.all(['cat', 'dan', 'eve'].map((n) => signInLinked(sys.gateway.url, `${n}@example.com`)))),
    ];
    const startAt = Date.now() + 4000;
    const jobs = await Promise.all(
      users.map((u, i) =>
        startJob(u, {
          message: 'On the hour',
          phoneNumbers: numbers(1, 94_000_000 + i * 100),
          startAt: new Date(startAt).toISOString(),
        }),
      ),
    );
    const done = await Promise.all(users.map((u, i) => waitForJob(u, jobs[i]!, isFinished, 20_000)));
    expect(done.map((j) => j.status)).toEqual(users.map(() => 'completed'));
    // Taken up to the lead ahead of the start, a job still says it started at its start, not before.
    for (const j of done) expect(Date.parse(j.startedAt!)).toBeGreaterThanOrEqual(startAt);
    const sentAt = await Promise.all(users.map(async (u, i) => Date.parse((await outboxOf(u, jobs[i]!))[0]!.at)));
    // One account per poll interval would have the fifth send four seconds late.
    for (const at of sentAt) {
      expect(at).toBeGreaterThanOrEqual(startAt - 5);
      expect(at - startAt).toBeLessThan(POLL_MS);
    }
    for (const u of users.slice(2)) u.tab.close();
  }, 60_000);
});
