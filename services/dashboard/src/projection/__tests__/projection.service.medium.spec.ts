import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { MessageStatus, MessageStatusEvent, SessionStateEvent } from '@bns/contracts';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { DashboardService } from '../../dashboard/dashboard.service.js';
import { PreferencesRepository } from '../../dashboard/preferences.repository.js';
import { AppliedEventEntity } from '../entities/applied-event.entity.js';
import type { ReadModelEvent } from '../event-shape.js';
import { ProjectionRepository } from '../projection.repository.js';
import { ProjectionService } from '../projection.service.js';

/** The projection in-process against a real Postgres: what the consumer hands it, and what the dashboard then answers. */

let app: InProcess;
let projection: ProjectionService;
let dashboard: DashboardService;

beforeAll(async () => {
  app = await inProcess([ProjectionRepository, ProjectionService, PreferencesRepository, DashboardService]);
  projection = app.module.get(ProjectionService);
  dashboard = app.module.get(DashboardService);
}, 60_000);

afterAll(() => app?.stop());

const newUser = () => `user_${randomUUID()}`;

function message(
  userId: string,
  recipient: string,
  status: MessageStatus,
  at: string,
  extra: Partial<MessageStatusEvent> = {},
): ReadModelEvent {
  return {
    subject: 'events.message.status',
    event: {
      eventId: randomUUID(),
      userId,
      at,
      jobId: 'job-1',
      idempotencyKey: `job-1:${recipient}`,
      recipient,
      status,
      content: `Hello ${recipient}`,
      ...(status === 'failed' ? { error: 'Number is not on WhatsApp' } : {}),
      ...extra,
    },
  };
}

function session(
  userId: string,
  state: SessionStateEvent['state'],
  at: string,
  extra: Partial<SessionStateEvent> = {},
): ReadModelEvent {
  return { subject: 'events.session.state', event: { eventId: randomUUID(), userId, at, state, ...extra } };
}

const NOW = new Date('2025-05-20T12:00:00Z');
const month = (data: Awaited<ReturnType<DashboardService['get']>>) => data.usage.monthly.at(-1);

describe('dedupe: a redelivered event never counts twice', () => {
  it('the same event applied again is skipped and changes nothing', async () => {
    const u = newUser();
    const sent = message(u, '91000001', 'sent', '2025-05-20T10:00:00Z');
    expect(await projection.applyBatch([sent])).toBe(1);
    const once = await dashboard.get(u, undefined, NOW);

    expect(await projection.applyBatch([sent])).toBe(0);
    expect(await projection.applyBatch([sent, sent])).toBe(0);
    const again = await dashboard.get(u, undefined, NOW);
    expect(again).toEqual(once);
    expect(again.stats).toEqual({
      totalMessages: 1,
      successfulMessages: 1,
      failedMessages: 0,
      activeSessions: 0,
      repliedMessages: 0,
      skippedMessages: 0,
    });
    expect(month(again)).toEqual({ month: '2025-05', sent: 1, failed: 0 });
  });

  it('a second copy inside one batch is applied once', async () => {
    const u = newUser();
    const failed = message(u, '91000002', 'failed', '2025-05-20T10:00:00Z');
    expect(await projection.applyBatch([failed, failed, failed])).toBe(1);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.stats).toMatchObject({ totalMessages: 1, failedMessages: 1 });
    expect(month(data)).toEqual({ month: '2025-05', sent: 0, failed: 1 });
    expect(data.messages).toEqual([
      expect.objectContaining({ recipient: '91000002', status: 'failed', error: 'Number is not on WhatsApp' }),
    ]);
  });

  it('the same send published again under a new event id still counts once (the fold is idempotent)', async () => {
    const u = newUser();
    await projection.applyBatch([message(u, '91000003', 'sent', '2025-05-20T10:00:00Z')]);
    expect(await projection.applyBatch([message(u, '91000003', 'sent', '2025-05-20T10:00:01Z')])).toBe(1);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.stats).toMatchObject({ totalMessages: 1, successfulMessages: 1 });
    expect(month(data)?.sent).toBe(1);
  });

  it('two replicas applying the same batch at once count it once', async () => {
    const u = newUser();
    const batch = Array.from({ length: 40 }, (_, i) =>
      message(u, `9200${String(i).padStart(4, '0')}`, i % 4 === 0 ? 'failed' : 'sent', '2025-05-20T10:00:00Z'),
    );
    const [a, b] = await Promise.all([projection.applyBatch(batch), projection.applyBatch([...batch].reverse())]);
    expect(a + b).toBe(40);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.stats).toEqual({
      totalMessages: 40,
      successfulMessages: 30,
      failedMessages: 10,
      activeSessions: 0,
      repliedMessages: 0,
      skippedMessages: 0,
    });
    expect(month(data)).toEqual({ month: '2025-05', sent: 30, failed: 10 });
  });
});

describe('batch apply', () => {
  it('folds a whole message life in one batch, totals and usage in step', async () => {
    const u = newUser();
    const applied = await projection.applyBatch([
      message(u, '93000001', 'sent', '2025-04-30T23:59:00Z'),
      message(u, '93000002', 'sent', '2025-05-01T00:00:10Z'),
      message(u, '93000001', 'delivered', '2025-05-01T00:00:20Z', { content: '' }),
      message(u, '93000001', 'read', '2025-05-01T00:00:30Z', { content: '' }),
      message(u, '93000003', 'failed', '2025-05-01T00:00:40Z'),
      message(u, '93000004', 'pending', '2025-05-01T00:00:50Z'),
    ]);
    expect(applied).toBe(6);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.stats).toEqual({
      totalMessages: 4,
      successfulMessages: 2,
      failedMessages: 1,
      activeSessions: 0,
      repliedMessages: 0,
      skippedMessages: 0,
    });
    // A message counts in the month it was first sent: 93000001 in April although its acks came in May.
    expect(data.usage.monthly.slice(-2)).toEqual([
      { month: '2025-04', sent: 1, failed: 0 },
      { month: '2025-05', sent: 1, failed: 1 },
    ]);
    const byRecipient = new Map(data.messages.map((m) => [m.recipient, m]));
    expect(byRecipient.get('93000001')).toMatchObject({
      status: 'read',
      content: 'Hello 93000001',
      sent_at: '2025-04-30T23:59:00.000Z',
    });
    expect(byRecipient.get('93000004')).toMatchObject({ status: 'pending', sent_at: null });
    // Newest first.
    expect(data.messages.map((m) => m.recipient)).toEqual(['93000004', '93000003', '93000002', '93000001']);
  });

  it('moves a status on across batches without counting again, and a late sent never moves it back', async () => {
    const u = newUser();
    await projection.applyBatch([message(u, '94000001', 'sent', '2025-05-20T10:00:00Z')]);
    await projection.applyBatch([message(u, '94000001', 'read', '2025-05-20T10:00:05Z', { content: '' })]);
    await projection.applyBatch([
      message(u, '94000001', 'sent', '2025-05-20T10:00:00Z'),
      message(u, '94000001', 'delivered', '2025-05-20T10:00:03Z'),
    ]);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.messages).toEqual([expect.objectContaining({ status: 'read' })]);
    expect(data.stats).toMatchObject({ totalMessages: 1, successfulMessages: 1 });
    expect(month(data)?.sent).toBe(1);
  });

  it('a send WhatsApp accepted and then refused moves from sent to failed: totals and usage follow', async () => {
    const u = newUser();
    await projection.applyBatch([
      message(u, '95000001', 'sent', '2025-05-20T10:00:00Z'),
      message(u, '95000002', 'sent', '2025-05-20T10:00:01Z'),
    ]);
    expect((await dashboard.get(u, undefined, NOW)).stats).toMatchObject({ successfulMessages: 2, failedMessages: 0 });
    await projection.applyBatch([
      message(u, '95000001', 'failed', '2025-05-20T10:00:09Z', { content: '', error: 'refused', refused: true }),
    ]);
    const data = await dashboard.get(u, undefined, NOW);
    expect(data.stats).toMatchObject({ totalMessages: 2, successfulMessages: 1, failedMessages: 1 });
    expect(month(data)).toEqual({ month: '2025-05', sent: 1, failed: 1 });
    expect(data.usage).toMatchObject({ messages_sent_count: 1, messages_failed_count: 1 });
    expect(data.messages.find((m) => m.recipient === '95000001')).toMatchObject({ status: 'failed', error: 'refused' });
  });

  it('counts skipped recipients from the jobs progress: the largest count per job, this month and all told', async () => {
    const u = newUser();
    const progress = (jobId: string, skipped: number | undefined, at: string): ReadModelEvent => ({
      subject: 'events.job.progress',
      event: {
        eventId: randomUUID(),
        userId: u,
        at,
        jobId,
        status: 'running',
        progress: { total: 10, sent: 1, failed: 0, ...(skipped === undefined ? {} : { skipped }) },
      },
    });
    await projection.applyBatch([
      progress('job-a', 2, '2025-04-10T00:00:00Z'),
      progress('job-a', 3, '2025-05-02T00:00:00Z'),
      progress('job-b', 4, '2025-05-03T00:00:00Z'),
    ]);
    // Late, repeated or smaller counts change nothing; an event without skips is nothing to count.
    await projection.applyBatch([
      progress('job-a', 1, '2025-05-04T00:00:00Z'),
      progress('job-b', 4, '2025-05-03T00:00:00Z'),
      progress('job-c', undefined, '2025-05-05T00:00:00Z'),
    ]);
    const data = await dashboard.get(u, undefined, NOW);
    // job-a counts in April (its first skips), job-b in May; neither is in the messages' total.
    expect(data.stats).toMatchObject({ skippedMessages: 7, totalMessages: 0 });
    expect(data.usage.messages_skipped_count).toBe(4);
    expect((await dashboard.get(newUser(), undefined, NOW)).stats.skippedMessages).toBe(0);
  });

  it('keeps users apart', async () => {
    const [ann, bob] = [newUser(), newUser()];
    await projection.applyBatch([
      message(ann, '95000001', 'sent', '2025-05-20T10:00:00Z'),
      message(bob, '95000001', 'failed', '2025-05-20T10:00:00Z'),
    ]);
    expect((await dashboard.get(ann, undefined, NOW)).stats).toMatchObject({
      successfulMessages: 1,
      failedMessages: 0,
    });
    expect((await dashboard.get(bob, undefined, NOW)).stats).toMatchObject({
      successfulMessages: 0,
      failedMessages: 1,
    });
  });

  it("shows each message an opaque, stable id that says nothing of other tenants' messages (no shared sequence)", async () => {
    const [ann, bob] = [newUser(), newUser()];
    await projection.applyBatch([
      message(ann, '95100001', 'sent', '2025-05-20T10:00:00Z'),
      message(bob, '95100001', 'sent', '2025-05-20T10:00:01Z'),
      message(ann, '95100002', 'sent', '2025-05-20T10:00:02Z'),
    ]);
    const annIds = (await dashboard.get(ann, undefined, NOW)).messages.map((m) => m.id);
    const bobIds = (await dashboard.get(bob, undefined, NOW)).messages.map((m) => m.id);
    for (const id of [...annIds, ...bobIds]) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([...annIds, ...bobIds]).size).toBe(3);
    // The same message keeps its id from one read to the next.
    expect((await dashboard.get(ann, undefined, NOW)).messages.map((m) => m.id)).toEqual(annIds);
    // Newest first, as before (the internal row number only orders ties).
    expect((await dashboard.get(ann, undefined, NOW)).messages.map((m) => m.recipient)).toEqual([
      '95100002',
      '95100001',
    ]);
  });

  it('keeps users apart when many read at once on the pooled, prepared read', async () => {
    const users = Array.from({ length: 12 }, newUser);
    await projection.applyBatch(
      users.map((u, i) => message(u, `9600${String(i).padStart(4, '0')}`, 'sent', '2025-05-20T10:00:00Z')),
    );
    // More reads at once than the pool has connections: each connection runs the prepared read for several users.
    const reads = users.flatMap((u, i) =>
      [0, 1, 2].map(async () => ({ u, i, data: await dashboard.get(u, undefined, NOW) })),
    );
    for (const { u, i, data } of await Promise.all(reads)) {
      expect(data.user.id).toBe(u);
      expect(data.messages.map((m) => m.recipient)).toEqual([`9600${String(i).padStart(4, '0')}`]);
      expect(data.stats).toMatchObject({ totalMessages: 1, successfulMessages: 1 });
    }
  });

  it('session states: the newest wins, a late older one is ignored', async () => {
    const u = newUser();
    await projection.applyBatch([
      session(u, 'ready', '2025-05-20T10:00:00Z', { sessionId: 's1', phoneNumber: '85291234567' }),
      session(u, 'qr', '2025-05-20T10:00:01Z'),
    ]);
    await projection.applyBatch([session(u, 'disconnected', '2025-05-20T09:00:00Z', { sessionId: 's1' })]);
    let data = await dashboard.get(u, undefined, NOW);
    expect(data.sessions).toEqual([
      {
        id: 's1',
        phoneNumber: '85291234567',
        active: true,
        connected_at: '2025-05-20T10:00:00.000Z',
        updated_at: '2025-05-20T10:00:00.000Z',
      },
    ]);
    expect(data.stats.activeSessions).toBe(1);

    await projection.applyBatch([session(u, 'ready', '2025-05-20T11:00:00Z', { sessionId: 's2' })]);
    data = await dashboard.get(u, undefined, NOW);
    expect(data.sessions.map((s) => [s.id, s.active])).toEqual([
      ['s2', true],
      ['s1', false],
    ]);
  });

  it('prunes only event ids older than the retention', async () => {
    const u = newUser();
    const old = message(u, '96000001', 'sent', '2025-05-20T10:00:00Z');
    await projection.applyBatch([old]);
    const appliedEvents = app.db.getRepository(AppliedEventEntity);
    await appliedEvents.update({ eventId: old.event.eventId }, { appliedAt: () => "now() - interval '40 days'" });
    await projection.applyBatch([message(u, '96000002', 'sent', '2025-05-20T10:00:00Z')]);
    expect(await projection.pruneAppliedEvents(35)).toBeGreaterThanOrEqual(1);
    expect(await appliedEvents.existsBy({ eventId: old.event.eventId })).toBe(false);
  });
});
