import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sleep } from '@bns/testing';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { OptOutsRepository } from '../../optouts/opt-outs.repository.js';
import { LaneQueue, type PlannedSend } from '../../queue/lane-queue.js';
import type { SendOutcome } from '../../queue/send-outcome.js';
import { jobHeadOf, jobStatusVersion } from '../job-view.js';
import { JobsRepository } from '../../store/jobs.repository.js';

const LIST_MAX = 2;

/**
 * The version leaves the result lists out: they only grow, with the counts. Checked here against the
 * real writes (lane steps with every kind of outcome, mid-job skips, pause, resume, cancel, fail) on a
 * real Postgres: whenever a version is seen again, everything the answer is built from is as it was.
 */
describe('job-status version over the writes of a job (in-process, real Postgres)', () => {
  let app: InProcess;
  let queue: LaneQueue;
  let users = 0;

  beforeAll(async () => {
    app = await startInProcess({
      SEND_DELAY_MS: '0',
      JOB_RETRY_BASE_MS: '10',
      JOB_MAX_RETRIES: '1',
      JOB_STATUS_LIST_MAX: String(LIST_MAX),
      JOB_BACKOFF_MS: '50',
      JOB_UNLINKED_RECHECK_MAX_MS: '20',
      JOB_UNLINKED_TIMEOUT_MS: '0',
    });
    queue = app.get(LaneQueue);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const em = () => app.get(Transactions).manager;

  /** Follows one job: each `look` reads its version and all its answer is built from, and checks the rule. */
  function watch(userId: string, jobId: string) {
    const seen = new Map<string, string>();
    let listsChanged = 0;
    let lastLists = '';
    return {
      async look(what: string): Promise<string> {
        // The head and its lists as the answer reads them: one statement.
        const { resultsJson: lists, ...job } = (await app.get(JobsRepository).statusOf(em(), userId, jobId, LIST_MAX))!;
        const head = jobHeadOf(job);
        const version = jobStatusVersion(userId, head, LIST_MAX);
        const answer = JSON.stringify([head, lists]);
        if (seen.has(version)) expect({ what, answer: seen.get(version) }).toEqual({ what, answer });
        seen.set(version, answer);
        if (lists !== lastLists) listsChanged++;
        lastLists = lists;
        return version;
      },
      get versions() {
        return seen.size;
      },
      get listsChanged() {
        return listsChanged;
      },
    };
  }

  /** The lane's next send, waiting out its pauses (taking the lane again after it slept); undefined when it has nothing left. */
  async function nextSend(worker: string, userId: string): Promise<PlannedSend | undefined> {
    for (let i = 0; i < 50; i++) {
      const step = await queue.next(worker, userId);
      if (step.kind === 'send') return step.send;
      if (step.kind === 'wait') {
        await sleep(step.waitMs + 5);
        continue;
      }
      const [again] = await queue.claim(worker, 1, 0, userId);
      if (!again) return undefined;
      await sleep(again.dueInMs + 5);
    }
    throw new Error('the lane kept waiting');
  }

  it('every send, failure, retry, skip and end of a job: a new version exactly when the answer changed', async () => {
    const userId = `user_version_${++users}`;
    const phones = ['91230001', '91230002', '91230003', '91230004', '91230005', '91230006'];
    const jobId = await app.seedJob(userId, phones);
    const job = watch(userId, jobId);
    await queue.heartbeat('w-v');
    await queue.claim('w-v', 10, 0, userId);
    await job.look('queued');

    const outcomes: SendOutcome[] = [
      { kind: 'sent', at: new Date(), duplicate: false, messageId: 'm1' },
      { kind: 'permanent', error: 'not on WhatsApp' },
      { kind: 'transient', error: 'timeout' },
      { kind: 'busy', error: 'in flight' },
      { kind: 'transient', error: 'timeout again' },
    ];
    const versions: string[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const send = (await nextSend('w-v', userId))!;
      versions.push(await job.look(`step ${i}: took ${send.phone}`));
      await queue.finish('w-v', send, outcome);
      versions.push(await job.look(`step ${i}: ${outcome.kind}`));
    }
    // The last pending number opts out before its turn: it is skipped, and the job ends.
    await app.get(Transactions).run((tx) => app.get(OptOutsRepository).add(tx, userId, ['91230006'], 'keyword'));
    for (let send = await nextSend('w-v', userId); send; send = await nextSend('w-v', userId)) {
      await queue.finish('w-v', send, { kind: 'sent', at: new Date(), duplicate: false, messageId: `m-${send.seq}` });
      await job.look(`sent ${send.phone}`);
    }
    await job.look('idle');

    const done = (await app.get(JobsRepository).findOwned(em(), userId, jobId))!;
    expect(done).toMatchObject({ status: 'completed', sent: 3, failed: 2, skipped: 1 });
    // With lists of 2, the newest two of each changed as the job went on, each time under a new version.
    expect(job.listsChanged).toBeGreaterThanOrEqual(5);
    expect(job.versions).toBeGreaterThanOrEqual(8);
  });

  it('pause, resume, pushback, unlinked, failure and cancel: each a new version, and an old one only for the same answer', async () => {
    const userId = `user_version_${++users}`;
    const jobId = await app.seedJob(userId, ['91230011', '91230012', '91230013']);
    const job = watch(userId, jobId);
    const jobs = app.get(JobsRepository);
    const queued = await job.look('queued');
    await app.get(Transactions).run((tx) => jobs.pause(tx, jobId, 'user', null));
    expect(await job.look('paused')).not.toBe(queued);
    await app.get(Transactions).run((tx) => jobs.resume(tx, jobId));
    // Back where it was: the same answer, so the same version.
    expect(await job.look('resumed')).toBe(queued);

    await queue.heartbeat('w-p');
    await queue.claim('w-p', 10, 0, userId);
    let send = (await nextSend('w-p', userId))!;
    const running = await job.look('running');
    await queue.finish('w-p', send, { kind: 'rate_limited', error: 'rate-overlimit' });
    expect(await job.look('rate limited')).not.toBe(running);
    send = (await nextSend('w-p', userId))!;
    await job.look('running again');
    // Unlinked past its timeout (0 here): the job fails with its error.
    await queue.finish('w-p', send, { kind: 'unlinked', error: 'not linked' });
    const failed = (await jobs.findOwned(em(), userId, jobId))!;
    expect(failed).toMatchObject({ status: 'failed', error: expect.any(String) });
    await job.look('failed');

    const other = await app.seedJob(userId, ['91230021']);
    const cancelled = watch(userId, other);
    const before = await cancelled.look('queued');
    await app.get(Transactions).run((tx) => jobs.cancel(tx, other));
    expect(await cancelled.look('cancelled')).not.toBe(before);
  });
});
