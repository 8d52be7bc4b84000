import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sleep, startSystem, type System } from '@bns/testing';
import { isFinished, jobOf, numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const DELAY_MS = 2000;
/** Wide on purpose: each next send is prepared (taken, marked sending) one and a half seconds before its slot. */
const LEAD_MS = 1500;
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

  /**
   * Runs `act` while the job's next send is prepared but not due: past the lead, before the slot.
   * Returns false when the test itself missed that window (its sleep or the call woke late on a
   * loaded machine), so the caller tries again with a fresh job rather than judge a late action.
   */
  async function actInPreparedWindow(user: User, jobId: string, act: () => Promise<void>): Promise<boolean> {
    const first = (await outboxOf(user, jobId))[0]!;
    const slot = Date.parse(first.at) + DELAY_MS;
    await sleep(Math.max(0, slot - LEAD_MS + 300 - Date.now()));
    if (Date.now() >= slot - 100) return false;
    await act();
    return Date.now() < slot - 50;
  }

  /** Up to three attempts, each on its own numbers; the last attempt that reached its window is judged. */
  async function inPreparedWindow(attempt: (n: number) => Promise<boolean>): Promise<void> {
    for (let n = 0; n < 3; n++) if (await attempt(n)) return;
    throw new Error('the test could not act inside the prepared window in three attempts (machine too slow)');
  }

  /** Clears a job whose window the test missed, so the next attempt has the lane to itself. */
  async function abandon(user: User, jobId: string): Promise<false> {
    await user.client.post(`/cancel-job/${jobId}`);
    await waitForJob(user, jobId, isFinished, 15_000);
    return false;
  }

  it('a cancel between the preparation and the slot withholds the prepared send; another user is not affected', async () => {
    await inPreparedWindow(async (n) => {
      const base = 91_000_000 + n * 1000;
      const jobId = await startJob(ann, { message: 'Cancel me', phoneNumbers: numbers(5, base) });
      const bobsJob = await startJob(bob, { message: 'Keep going', phoneNumbers: numbers(3, base + 1_000_000) });
      await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
      let res: Awaited<ReturnType<User['client']['post']>> | undefined;
      const inWindow = await actInPreparedWindow(ann, jobId, async () => {
        res = await ann.client.post(`/cancel-job/${jobId}`);
      });
      expect(res?.status ?? 200).toBe(200);
      if (!inWindow) {
        await abandon(ann, jobId);
        await waitForJob(bob, bobsJob, isFinished, 20_000);
        return false;
      }
      expect(res!.body.job.status).toBe('cancelled');
      await sleep(DELAY_MS * 2);

      expect((await outboxOf(ann, jobId)).map((m) => m.to)).toEqual([String(base)]);
      const after = await jobOf(ann, jobId);
      expect(after).toMatchObject({ status: 'cancelled', progress: { total: 5, sent: 1, failed: 0 } });
      expect(after.results.failedList).toEqual([]);

      const bobs = await waitForJob(bob, bobsJob, isFinished, 20_000);
      expect(bobs).toMatchObject({ status: 'completed', progress: { sent: 3 } });
      expect((await outboxOf(bob, bobsJob)).map((m) => m.to)).toEqual(numbers(3, base + 1_000_000));
      return true;
    });
  }, 120_000);

  it('a pause there withholds it too; after the resume every recipient is sent exactly once, the gap kept', async () => {
    await inPreparedWindow(async (n) => {
      const base = 93_000_000 + n * 1000;
      const jobId = await startJob(ann, { message: 'Pause me', phoneNumbers: numbers(3, base) });
      await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
      let status: number | undefined;
      const inWindow = await actInPreparedWindow(ann, jobId, async () => {
        status = (await ann.client.post(`/pause-job/${jobId}`)).status;
      });
      expect(status ?? 200).toBe(200);
      if (!inWindow) return abandon(ann, jobId);
      await sleep(DELAY_MS * 2);
      expect((await outboxOf(ann, jobId)).length).toBe(1);
      expect((await jobOf(ann, jobId)).status).toBe('paused');

      expect((await ann.client.post(`/resume-job/${jobId}`)).status).toBe(200);
      const done = await waitForJob(ann, jobId, isFinished, 20_000);
      expect(done).toMatchObject({ status: 'completed', progress: { total: 3, sent: 3, failed: 0 } });
      const sent = await outboxOf(ann, jobId);
      expect(sent.map((m) => m.to)).toEqual(numbers(3, base));
      for (let i = 1; i < sent.length; i++)
        expect(Date.parse(sent[i]!.at) - Date.parse(sent[i - 1]!.at)).toBeGreaterThanOrEqual(DELAY_MS);
      return true;
    });
  }, 120_000);

  it('the next recipient opting out there withholds its send: it is skipped, the rest go on, the gap kept', async () => {
    await inPreparedWindow(async (n) => {
      const phones = numbers(3, 94_000_000 + n * 1000);
      const jobId = await startJob(ann, { message: 'Opt me out', phoneNumbers: phones });
      await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 15_000, 'first sent');
      let add: Awaited<ReturnType<User['client']['post']>> | undefined;
      const inWindow = await actInPreparedWindow(ann, jobId, async () => {
        // Bob putting the same number on his own list changes nothing for Ann.
        expect((await bob.client.post(`/api/opt-outs/${bob.userId}`, { phoneNumbers: [phones[1]] })).status).toBe(200);
        add = await ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: [phones[1]] });
      });
      expect(add?.body).toEqual({ success: true, added: 1, alreadyListed: 0 });
      if (!inWindow) return abandon(ann, jobId);

      const done = await waitForJob(ann, jobId, isFinished, 20_000);
      expect(done).toMatchObject({ status: 'completed', progress: { total: 3, sent: 2, failed: 0, skipped: 1 } });
      const sent = await outboxOf(ann, jobId);
      expect(sent.map((m) => m.to)).toEqual([phones[0], phones[2]]);
      expect(Date.parse(sent[1]!.at) - Date.parse(sent[0]!.at)).toBeGreaterThanOrEqual(DELAY_MS);
      return true;
    });
  }, 120_000);
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
