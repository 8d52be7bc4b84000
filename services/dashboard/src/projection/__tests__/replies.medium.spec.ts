import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { LIMITS, type MessageReceivedEvent, type MessageStatus } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { DashboardService } from '../../dashboard/dashboard.service.js';
import { PreferencesRepository } from '../../dashboard/preferences.repository.js';
import { InboundMessageEntity } from '../entities/inbound-message.entity.js';
import { MessageEntity } from '../entities/message.entity.js';
import { parseReadModelEvent, type ReadModelEvent } from '../event-shape.js';
import { ProjectionRepository } from '../projection.repository.js';
import { ProjectionService } from '../projection.service.js';

/** Replies in-process against a real Postgres: from events to what the dashboard answers. */

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

function sent(
  userId: string,
  recipient: string,
  at: string,
  job = 'job-1',
  status: MessageStatus = 'sent',
): ReadModelEvent {
  return {
    subject: 'events.message.status',
    event: {
      eventId: randomUUID(),
      userId,
      at,
      jobId: job,
      idempotencyKey: `${job}:${recipient}`,
      recipient,
      status,
      content: `Hi ${recipient}`,
    },
  };
}

/** As the consumer hands it over: parsed like an event off the stream. */
function received(
  userId: string,
  from: string,
  text: string,
  at: string,
  extra: Partial<MessageReceivedEvent> = {},
): ReadModelEvent {
  const parsed = parseReadModelEvent('events.message.received', {
    eventId: randomUUID(),
    userId,
    at,
    from,
    text,
    messageId: randomUUID(),
    ...extra,
  });
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

async function messages(userId: string) {
  const data = await dashboard.get(userId, 100);
  return { data, by: new Map(data.messages.map((m) => [`${m.job_id}:${m.recipient}`, m])) };
}

describe('a recipient who answers', () => {
  it('marks the message replied with the time and the first 200 characters, and counts it', async () => {
    const u = newUser();
    await projection.applyBatch([
      sent(u, '91230001', '2025-05-20T10:00:00.500Z'),
      sent(u, '91230002', '2025-05-20T10:00:01Z'),
    ]);
    // WhatsApp's times have whole seconds: an answer in the same second as the send still counts.
    const text = '😀'.repeat(150) + 'x'.repeat(100);
    await projection.applyBatch([received(u, '91230001', text, '2025-05-20T10:00:00Z')]);

    const { data, by } = await messages(u);
    expect(by.get('job-1:91230001')).toMatchObject({
      status: 'sent',
      replied_at: '2025-05-20T10:00:00.000Z',
      reply: Array.from(text).slice(0, LIMITS.replyPreviewMax).join(''),
    });
    expect(Array.from(by.get('job-1:91230001')!.reply!)).toHaveLength(LIMITS.replyPreviewMax);
    expect(by.get('job-1:91230002')).toMatchObject({ replied_at: null, reply: null });
    expect(data.stats).toEqual({
      totalMessages: 2,
      successfulMessages: 2,
      failedMessages: 0,
      activeSessions: 0,
      repliedMessages: 1,
      skippedMessages: 0,
    });
  });

  it('is idempotent: a redelivered event, or the same WhatsApp message under a new event id, counts once', async () => {
    const u = newUser();
    await projection.applyBatch([sent(u, '91240001', '2025-05-20T10:00:00Z')]);
    const answer = received(u, '91240001', 'Yes please', '2025-05-20T10:05:00Z');
    expect(await projection.applyBatch([answer, answer])).toBe(1);
    expect(await projection.applyBatch([answer])).toBe(0);
    const again = { ...answer, event: { ...answer.event, eventId: randomUUID() } } as ReadModelEvent;
    expect(await projection.applyBatch([again])).toBe(1);
    const { data } = await messages(u);
    expect(data.stats.repliedMessages).toBe(1);
    expect(await app.db.getRepository(InboundMessageEntity).countBy({ userId: u })).toBe(1);
  });

  it('keeps the first answer; more answers from the same number do not count again', async () => {
    const u = newUser();
    await projection.applyBatch([sent(u, '91250001', '2025-05-20T10:00:00Z')]);
    await projection.applyBatch([received(u, '91250001', 'first', '2025-05-20T10:01:00Z')]);
    await projection.applyBatch([
      received(u, '91250001', 'second', '2025-05-20T10:02:00Z'),
      received(u, '91250001', 'third', '2025-05-20T10:03:00Z'),
    ]);
    const { data, by } = await messages(u);
    expect(by.get('job-1:91250001')).toMatchObject({ replied_at: '2025-05-20T10:01:00.000Z', reply: 'first' });
    expect(data.stats.repliedMessages).toBe(1);
  });

  it('answers the most recent message sent to that number before it, not an older one nor a later one', async () => {
    const u = newUser();
    await projection.applyBatch([
      sent(u, '91260001', '2025-05-20T09:00:00Z', 'job-a'),
      sent(u, '91260001', '2025-05-20T10:00:00Z', 'job-b'),
    ]);
    await projection.applyBatch([received(u, '91260001', 'about b', '2025-05-20T10:30:00Z')]);
    await projection.applyBatch([sent(u, '91260001', '2025-05-20T11:00:00Z', 'job-c')]);
    const { by } = await messages(u);
    expect(by.get('job-a:91260001')?.replied_at).toBeNull();
    expect(by.get('job-b:91260001')?.reply).toBe('about b');
    expect(by.get('job-c:91260001')?.replied_at).toBeNull();
  });

  it('matches an answer applied before its send (the two come through different consumers)', async () => {
    const u = newUser();
    await projection.applyBatch([received(u, '85291270001@c.us', 'early bird', '2025-05-20T10:00:05Z')]);
    expect((await messages(u)).data.stats.repliedMessages).toBe(0);
    await projection.applyBatch([sent(u, '91270001', '2025-05-20T10:00:00Z')]);
    const { data, by } = await messages(u);
    expect(by.get('job-1:91270001')).toMatchObject({ replied_at: '2025-05-20T10:00:05.000Z', reply: 'early bird' });
    expect(data.stats.repliedMessages).toBe(1);
    // Acks later change nothing about it.
    await projection.applyBatch([sent(u, '91270001', '2025-05-20T10:00:03Z', 'job-1', 'read')]);
    expect((await messages(u)).data.stats.repliedMessages).toBe(1);
  });

  it('a send and its answer applied at the same moment still meet', async () => {
    const u = newUser();
    const numbers = Array.from({ length: 10 }, (_, i) => `9128${String(i).padStart(4, '0')}`);
    await Promise.all([
      projection.applyBatch(numbers.map((n) => sent(u, n, '2025-05-20T10:00:00Z'))),
      ...numbers.map((n) => projection.applyBatch([received(u, `852${n}`, `ok ${n}`, '2025-05-20T10:00:09Z')])),
    ]);
    const { data, by } = await messages(u);
    expect(data.stats.repliedMessages).toBe(10);
    for (const n of numbers) expect(by.get(`job-1:${n}`)?.reply).toBe(`ok ${n}`);
  });

  it('ignores failed sends, numbers never messaged, and other users', async () => {
    const [ann, bob] = [newUser(), newUser()];
    await projection.applyBatch([
      sent(ann, '91290001', '2025-05-20T10:00:00Z', 'job-1', 'failed'),
      sent(bob, '91290002', '2025-05-20T10:00:00Z'),
    ]);
    await projection.applyBatch([
      received(ann, '91290001', 'never got it', '2025-05-20T10:01:00Z'),
      received(ann, '91290002', 'who is this', '2025-05-20T10:01:00Z'),
    ]);
    expect((await messages(ann)).data.stats.repliedMessages).toBe(0);
    expect((await messages(ann)).by.get('job-1:91290001')?.replied_at).toBeNull();
    expect((await messages(bob)).data.stats.repliedMessages).toBe(0);
    expect((await messages(bob)).by.get('job-1:91290002')?.replied_at).toBeNull();
  });
});

describe('received texts are personal data', () => {
  it("are deleted with the user's read model, and only that user's", async () => {
    const [ann, bob] = [newUser(), newUser()];
    for (const u of [ann, bob]) {
      await projection.applyBatch([
        sent(u, '91300001', '2025-05-20T10:00:00Z'),
        received(u, '91300001', 'private', '2025-05-20T10:01:00Z'),
      ]);
    }
    const repo = app.module.get(ProjectionRepository);
    await app.module.get(Transactions).run((em) => repo.forgetUser(em, ann));
    const inbound = app.db.getRepository(InboundMessageEntity);
    expect(await inbound.countBy({ userId: ann })).toBe(0);
    expect(await app.db.getRepository(MessageEntity).countBy({ userId: ann })).toBe(0);
    expect((await messages(ann)).data.stats).toMatchObject({ totalMessages: 0, repliedMessages: 0 });
    expect(await inbound.countBy({ userId: bob })).toBe(1);
    expect((await messages(bob)).data.stats.repliedMessages).toBe(1);
  });

  it('a malformed event is refused with a reason that never quotes the text', () => {
    const base = {
      eventId: 'e1',
      userId: 'u1',
      at: '2025-05-20T10:00:00Z',
      from: '91234567',
      text: 'my secret',
      messageId: 'm1',
    };
    for (const bad of [
      { ...base, from: 'abc my secret' },
      { ...base, text: 42 },
      { ...base, messageId: '' },
      { ...base, at: 'my secret' },
    ]) {
      const problem = parseReadModelEvent('events.message.received', bad);
      expect(typeof problem).toBe('string');
      expect(problem).not.toContain('secret');
    }
    expect(parseReadModelEvent('events.message.received', { ...base, text: 'a\u0000b' })).toMatchObject({
      event: { text: 'ab', from: '91234567' },
    });
  });
});
