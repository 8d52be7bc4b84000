import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PACING_LOG, SESSION_MESSAGES } from '@bns/contracts';
import { startSystem, type System } from '@bns/testing';
import { isFinished, numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const BACKOFF_MS = [1500, 3000];

async function logMessages(user: User, jobId: string): Promise<string[]> {
  return (await user.client.get(`/job-logs/${jobId}`)).body.logs.map((l: { message: string }) => l.message);
}

describe('WhatsApp pushback (rate-overlimit) backs the account off, growing, and loses nothing', () => {
  let sys: System;
  let ann: User;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      // The simulated phone accepts 3 messages, then answers rate-overlimit once, and so on.
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50', SIM_RATE_LIMIT_AFTER: '3' },
      serviceEnv: { jobs: { SEND_DELAY_MS: '100', JOB_BACKOFF_MS: BACKOFF_MS.join(',') } },
    });
    ann = await signInLinked(sys.gateway.url, 'ann-backoff@example.com');
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await sys?.stop();
  });

  it('pauses the job as rate_limited until resumesAt, then goes on; the next hit waits longer', async () => {
    const phones = numbers(8, 62_000_000);
    const jobId = await startJob(ann, { message: 'Easy does it', phoneNumbers: phones });
    const limited = await waitForJob(ann, jobId, (j) => j.status === 'paused', 10_000, 'rate limited');
    // The phone counts every send (the link's welcome message too), so the first pushback comes within 3.
    expect(limited).toMatchObject({ pausedReason: 'rate_limited', progress: { failed: 0 } });
    expect(limited.progress.sent).toBeGreaterThanOrEqual(2);
    expect(limited.progress.sent).toBeLessThanOrEqual(3);
    const firstWait = Date.parse(limited.resumesAt!) - Date.now();
    expect(firstWait).toBeGreaterThan(500);
    expect(firstWait).toBeLessThanOrEqual(BACKOFF_MS[0]!);

    const second = await waitForJob(
      ann,
      jobId,
      (j) => j.status === 'paused' && j.progress.sent === limited.progress.sent + 3,
      15_000,
      'second pushback',
    );
    const secondWait = Date.parse(second.resumesAt!) - Date.now();
    expect(secondWait).toBeGreaterThan(BACKOFF_MS[0]!);

    const done = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(done).toMatchObject({ status: 'completed', pausedReason: null, progress: { total: 8, sent: 8, failed: 0 } });
    // Each recipient exactly once; the refused sends used no retry and failed nobody.
    expect((await outboxOf(ann, jobId)).map((m) => m.to).sort()).toEqual(phones);
    const logs = await logMessages(ann, jobId);
    const backoffLines = logs.filter((m) => m.startsWith('WhatsApp is limiting how fast this number may send'));
    expect(backoffLines).toHaveLength(2);
    expect(logs.filter((m) => m === PACING_LOG.resumed)).toHaveLength(2);
    expect(logs.some((m) => m.includes(SESSION_MESSAGES.rateLimited))).toBe(false);
  }, 60_000);
});
