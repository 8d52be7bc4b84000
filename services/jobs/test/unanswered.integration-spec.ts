import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PAUSED_REASON_TEXT, type SendsToday } from '@bns/contracts';
import { simulatorInbound, startSystem, waitFor, type System } from '@bns/testing';
import { jobOf, numbers, signInLinked, startJob, waitForJob, type User } from './helpers.js';

/**
 * The unanswered budget end to end (gateway, jobs, sessions with the simulated engine, NATS, Postgres):
 * sends to numbers that never replied are counted, a reply takes its number's sends off, and the
 * policy's limit makes the campaign wait with its reason in plain words.
 */
describe('unanswered budget (real services)', () => {
  let sys: System;
  let ann: User;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      services: ['jobs', 'sessions'],
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
      serviceEnv: { jobs: { SEND_DELAY_MS: '200', SEND_JITTER_MS: '0' } },
    });
    ann = await signInLinked(sys.gateway.url, 'ann@unanswered.test');
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await sys?.stop();
  });

  const today = async (): Promise<SendsToday> => {
    const res = await ann.client.get(`/api/sends-today/${ann.userId}`);
    expect(res.status).toBe(200);
    return res.body.today as SendsToday;
  };

  it('counts messages nobody answered, uncounts a number that replies, and waits at the limit', async () => {
    expect((await today()).unanswered).toEqual({ month: 0, last30Days: 0, limit: null });
    const policy = await ann.client.put(`/api/sending-policy/${ann.userId}`, { unansweredLimit: 3 });
    expect(policy.status).toBe(200);
    expect(policy.body.policy).toMatchObject({ unansweredLimit: 3, preset: 'custom' });

    const phones = numbers(5, 65_000_000);
    const jobId = await startJob(ann, { message: 'Hello there', phoneNumbers: phones });
    const paused = await waitForJob(ann, jobId, (j) => j.status === 'paused', 60_000);
    expect(paused).toMatchObject({ pausedReason: 'unanswered', progress: { sent: 3 } });
    expect(PAUSED_REASON_TEXT.unanswered).toBe('Too many messages nobody answered');
    const logs = (await ann.client.get(`/job-logs/${jobId}`)).body.logs as { message: string }[];
    expect(logs.some((l) => l.message.startsWith('Too many messages nobody answered: 3 in the last 30 days'))).toBe(
      true,
    );
    expect(await today()).toMatchObject({ sent: 3, unanswered: { month: 3, last30Days: 3, limit: 3 } });

    // The second number writes back: its message is an answered one now.
    await simulatorInbound(sys.gateway.url, ann.token, `852${phones[1]}`, 'Yes please');
    await waitFor(
      async () => (await today()).unanswered.last30Days === 2,
      15_000,
      200,
      'the reply to take its message off',
    );
    expect((await today()).unanswered).toEqual({ month: 2, last30Days: 2, limit: 3 });
    // Still paused: the gate is judged again at the next midnight, not at every reply.
    expect((await jobOf(ann, jobId)).status).toBe('paused');

    // Another user sees only their own figures.
    const bob = await signInLinked(sys.gateway.url, 'bob@unanswered.test');
    expect((await bob.client.get(`/api/sends-today/${ann.userId}`)).status).toBe(403);
    expect((await bob.client.get(`/api/sends-today/${bob.userId}`)).body.today.unanswered).toEqual({
      month: 0,
      last30Days: 0,
      limit: null,
    });
    bob.tab.close();
  }, 120_000);
});
