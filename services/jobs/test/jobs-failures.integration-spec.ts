import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JOB_MESSAGES, SESSION_MESSAGES, shardOf } from '@bns/contracts';
import { sleep, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import {
  isFinished,
  jobOf,
  link,
  numbers,
  outboxOf,
  signInLinked,
  startJob,
  waitForJob,
  type User,
} from './helpers.js';

const SHARDS = 2;
const NOT_ON_WHATSAPP = '98000002';
const UNLINKED_TIMEOUT_MS = 4000;

async function logMessages(user: User, jobId: string): Promise<string[]> {
  return (await user.client.get(`/job-logs/${jobId}`)).body.logs.map((l: { message: string }) => l.message);
}

describe('failures: permanent ones fail the recipient, temporary ones retry or pause', () => {
  let sys: System;
  let ann: User;
  const restarted: ServiceHandle[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: SHARDS,
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50', SIM_FAIL_NUMBERS: `852${NOT_ON_WHATSAPP}` },
      serviceEnv: {
        jobs: {
          SEND_DELAY_MS: '200',
          JOB_UNLINKED_TIMEOUT_MS: String(UNLINKED_TIMEOUT_MS),
          JOB_RETRY_BASE_MS: '1500',
          RPC_TIMEOUT_MS: '3000',
        },
      },
    });
    ann = await signInLinked(sys.gateway.url, 'ann-failures@example.com');
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await Promise.all(restarted.map((h) => h.stop()));
    await sys?.stop();
  });

  it('"not on WhatsApp" fails that recipient at once, keeps its reason, and the job goes on', async () => {
    const jobId = await startJob(ann, { message: 'Hi', phoneNumbers: ['98000001', NOT_ON_WHATSAPP, '98000003'] });
    const job = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(job.status).toBe('completed');
    expect(job.progress).toEqual({ total: 3, sent: 2, failed: 1 });
    expect(job.results.failedList).toEqual([
      { phoneNumber: NOT_ON_WHATSAPP, timestamp: expect.any(String), error: SESSION_MESSAGES.notOnWhatsApp },
    ]);
    expect(job.results.successList.map((s) => s.originalNumber)).toEqual(['98000001', '98000003']);
    const logs = await logMessages(ann, jobId);
    expect(logs).toContain(JOB_MESSAGES.messageFailed(NOT_ON_WHATSAPP, SESSION_MESSAGES.notOnWhatsApp));
    expect(logs.some((m) => m.startsWith('Temporary problem'))).toBe(false);
    expect((await outboxOf(ann, jobId)).map((m) => m.to)).toEqual(['98000001', '98000003']);
    const failedEvent = ann.tab
      .named('message_status')
      .find((e) => e.payload.jobId === jobId && e.payload.status === 'failed');
    expect(failedEvent?.payload).toMatchObject({
      recipient: NOT_ON_WHATSAPP,
      error: SESSION_MESSAGES.notOnWhatsApp,
      content: 'Hi',
    });
  });

  it('an unlinked account pauses the job; once linked again it resumes and nothing is lost or doubled', async () => {
    const jobId = await startJob(ann, { message: 'Pause me', phoneNumbers: numbers(8, 98_100_000) });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 2, 10_000, 'two sent');
    expect((await ann.client.post('/dev/simulator/disconnect')).status).toBe(200);
    await waitFor(
      async () => (await logMessages(ann, jobId)).includes(JOB_MESSAGES.waitingForLink),
      10_000,
      100,
      'the pause',
    );
    const paused = await jobOf(ann, jobId);
    expect(paused.status).toBe('running');
    await sleep(400);
    expect((await jobOf(ann, jobId)).progress.sent).toBe(paused.progress.sent);

    await link(ann);
    const done = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(done).toMatchObject({ status: 'completed', progress: { total: 8, sent: 8, failed: 0 } });
    expect(await logMessages(ann, jobId)).toContain(JOB_MESSAGES.resumed);
    const sent = (await outboxOf(ann, jobId)).map((m) => m.to).sort();
    expect(sent).toEqual(numbers(8, 98_100_000));
  });

  it('a job whose account stays unlinked past JOB_UNLINKED_TIMEOUT_MS fails with that reason', async () => {
    const jobId = await startJob(ann, { message: 'Abandoned', phoneNumbers: numbers(5, 98_200_000) });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 10_000, 'one sent');
    expect((await ann.client.post('/dev/simulator/disconnect')).status).toBe(200);
    const failed = await waitForJob(ann, jobId, isFinished, UNLINKED_TIMEOUT_MS + 15_000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(JOB_MESSAGES.unlinkedTooLong(UNLINKED_TIMEOUT_MS));
    expect(failed.progress.sent).toBeLessThan(5);
    expect((await logMessages(ann, jobId)).at(-1)).toBe(failed.error);
    await link(ann);
  });

  it('a sessions outage (the shard gone) makes the job wait without using any retry, and the message goes out once sessions is back', async () => {
    const shard = shardOf(ann.userId, SHARDS);
    // Enough recipients that the job cannot finish before the shard is gone, even on a loaded machine
    // where the poll and the graceful stop take a second or two.
    const total = 30;
    const jobId = await startJob(ann, { message: 'Survive the outage', phoneNumbers: numbers(total, 98_300_000) });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 10_000, 'one sent');
    const handle = sys.services.find((h) => h.label === `sessions-${shard}`)!;
    await handle.stop();
    // Longer than the retries' 2 + 4 + 8 s would take with nobody answering at once: nothing fails meanwhile.
    await sleep(16_000);
    const waiting = await jobOf(ann, jobId);
    expect(waiting).toMatchObject({ status: 'running', progress: { failed: 0 } });
    expect(waiting.progress.sent).toBeLessThan(total);
    restarted.push(await sys.start('sessions', { SHARD_INDEX: String(shard) }, `sessions-${shard}`));

    const done = await waitForJob(ann, jobId, isFinished, 30_000);
    expect(done).toMatchObject({ status: 'completed', progress: { total, sent: total, failed: 0 } });
    // Not the message's fault: no retry of it was used or announced.
    expect((await logMessages(ann, jobId)).filter((m) => m.startsWith('Temporary problem'))).toEqual([]);
    expect((await outboxOf(ann, jobId)).map((m) => m.to).sort()).toEqual(numbers(total, 98_300_000));
  }, 90_000);
});
