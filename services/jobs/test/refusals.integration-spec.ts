import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  PACING_LOG,
  PAUSED_REASON_TEXT,
  SESSION_MESSAGES,
  type MessageStatusEvent,
  type RecipientResult,
} from '@bns/contracts';
import { connectNats } from '@bns/service-kit';
import { startSystem, type System } from '@bns/testing';
import { numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const REFUSED = numbers(3, 64_000_000);

/**
 * Accepted is not delivered, end to end (gateway, jobs, sessions with the simulated engine, NATS,
 * Postgres): numbers in SIM_REFUSE_NUMBERS take the message and then refuse it. The recipient ends
 * failed with the reason (report, status, event), and two refusals in a row to new contacts pause
 * the campaign for the user to resume.
 */
describe('refused sends (real services)', () => {
  let sys: System;
  let ann: User;
  let nc: NatsConnection;
  const statuses: MessageStatusEvent[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      services: ['jobs', 'sessions'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        // Slow receipts: the refusals (≤ 1 s after acceptance) come before any delivery ends their row.
        SIM_DELIVERED_DELAY_MS: '20000',
        SIM_READ_DELAY_MS: '20000',
        SIM_REFUSE_NUMBERS: REFUSED.join(','),
        SIM_REFUSE_DELAY_MS: '150',
      },
      serviceEnv: { jobs: { SEND_DELAY_MS: '600' } },
    });
    ann = await signInLinked(sys.gateway.url, 'ann@refusals.test');
    nc = await connectNats(sys.nats.url, 'refusals-test');
    nc.subscribe('events.message.status', {
      callback: (err, msg) => {
        if (!err) statuses.push(msg.json<MessageStatusEvent>());
      },
    });
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await nc?.drain();
    await sys?.stop();
  });

  it('fails refused sends with a plain reason and pauses after two in a row to new contacts; Resume goes on', async () => {
    const ok = numbers(3, 64_100_000);
    const list = [ok[0]!, REFUSED[0]!, REFUSED[1]!, ok[1]!, ok[2]!];
    const jobId = await startJob(ann, { message: 'Hello', phoneNumbers: list });

    const paused = await waitForJob(ann, jobId, (j) => j.status === 'paused', 30_000, 'paused by refusals');
    expect(paused).toMatchObject({ pausedReason: 'refused' });
    expect(paused.progress).toMatchObject({ total: 5, sent: 1, failed: 2 });
    expect(PAUSED_REASON_TEXT.refused).toBe('WhatsApp is refusing messages to new contacts');

    // WhatsApp took both (they are on the simulated phone), and both came back refused.
    const outbox = await outboxOf(ann, jobId);
    expect(outbox.map((m) => m.to.slice(-8))).toEqual(expect.arrayContaining([REFUSED[0], REFUSED[1]]));
    const report = (await ann.client.get(`/job-results/${jobId}?limit=10`)).body.results as RecipientResult[];
    const byPhone = new Map(report.map((r) => [r.phoneNumber, r]));
    expect(byPhone.get(REFUSED[0]!)).toMatchObject({
      status: 'failed',
      error: SESSION_MESSAGES.sendRefusedAfterAccept,
    });
    expect(byPhone.get(REFUSED[1]!)).toMatchObject({ status: 'failed' });
    expect(byPhone.get(ok[0]!)).toMatchObject({ status: 'sent' });
    const logs = (await ann.client.get(`/job-logs/${jobId}`)).body.logs.map((l: { message: string }) => l.message);
    expect(logs).toContain(PACING_LOG.refusingNewContacts(2));
    // The event webhooks are made from (message.failed), with the reason.
    const refused = statuses.filter((s) => s.jobId === jobId && s.status === 'failed');
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ refused: true, error: SESSION_MESSAGES.sendRefusedAfterAccept });

    // Nothing more goes out while paused; Resume sends the rest.
    const sentWhilePaused = (await outboxOf(ann, jobId)).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await outboxOf(ann, jobId)).length).toBe(sentWhilePaused);
    expect((await ann.client.post(`/resume-job/${jobId}`)).status).toBe(200);
    const done = await waitForJob(ann, jobId, (j) => j.status === 'completed', 30_000, 'completed');
    expect(done.progress).toMatchObject({ total: 5, sent: 3, failed: 2 });
  }, 90_000);
});
