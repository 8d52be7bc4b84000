import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { DASHBOARD_MESSAGES, LIMITS, MESSAGES, type DashboardData } from '@bns/contracts';
import { connectNats, RpcClient } from '@bns/service-kit';
import { api, devSignIn, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { messageEvent, Producer, receivedEvent, sessionEvent } from './read-model.js';

type Api = ReturnType<typeof api>;
const thisMonth = () => new Date().toISOString().slice(0, 7);

let sys: System;
let nc: NatsConnection;
let producer: Producer;
let restarted: ServiceHandle | undefined;
const users: Record<'ann' | 'bob', { userId: string; http: Api }> = {} as never;

async function dashboard(who: 'ann' | 'bob', query = ''): Promise<DashboardData> {
  const res = await users[who].http.get(`/api/dashboard/${users[who].userId}${query}`);
  expect(res.status).toBe(200);
  expect(res.body.success).toBe(true);
  return res.body.data as DashboardData;
}

beforeAll(async () => {
  sys = await startSystem({
    services: ['dashboard'],
    // A killed replica's unacked events come back after the ack wait (8 s); every other wait is shorter
    // than that, so an event that stalls in the service until redelivery fails the test.
    serviceEnv: {
      dashboard: { DASHBOARD_ACK_WAIT_MS: '8000' },
      gateway: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
    },
  });
  nc = await connectNats(sys.nats.url, 'dashboard-test');
  producer = new Producer(nc);
  for (const who of ['ann', 'bob'] as const) {
    const s = await devSignIn(sys.gateway.url, `${who}@shop.hk`);
    users[who] = { userId: s.userId, http: api(sys.gateway.url, s.token) };
  }
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await restarted?.stop();
  await sys?.stop();
});

describe('the read model built from events', () => {
  it('counts a completed job: sent and failed match what the job published', async () => {
    const { userId } = users.ann;
    const sent = ['85291000001', '85291000002', '85291000003'];
    const failed = ['85291000004', '85291000005'];
    for (const r of sent) await producer.message(messageEvent(userId, 'job-1', r, 'sent'));
    for (const r of failed) await producer.message(messageEvent(userId, 'job-1', r, 'failed'));
    await producer.waitApplied();

    const data = await dashboard('ann');
    expect(data.stats).toEqual({
      totalMessages: 5,
      successfulMessages: 3,
      failedMessages: 2,
      activeSessions: 0,
      repliedMessages: 0,
      skippedMessages: 0,
    });
    expect(data.usage.messages_sent_count).toBe(3);
    expect(data.usage.messages_failed_count).toBe(2);
    expect(data.usage.monthly).toHaveLength(12);
    expect(data.usage.monthly.at(-1)).toEqual({ month: thisMonth(), sent: 3, failed: 2 });
    expect(data.usage.monthly.slice(0, 11).every((m) => m.sent === 0 && m.failed === 0)).toBe(true);
    expect(data.messages).toHaveLength(5);
    // Newest first: the last failed one was published last.
    expect(data.messages[0]).toMatchObject({
      recipient: '85291000005',
      status: 'failed',
      error: 'Number is not on WhatsApp',
      job_id: 'job-1',
    });
    const okOne = data.messages.find((m) => m.recipient === '85291000001')!;
    expect(okOne).toMatchObject({ status: 'sent', error: null, content: 'Hello 85291000001, your order is ready' });
    expect(Date.parse(okOne.sent_at!)).toBeGreaterThan(Date.now() - 60_000);

    // Acks from the phone move statuses on without counting anything again.
    await producer.message(messageEvent(userId, 'job-1', sent[0]!, 'delivered', { content: '' }));
    await producer.message(messageEvent(userId, 'job-1', sent[1]!, 'read', { content: '' }));
    await producer.waitApplied();
    const after = await dashboard('ann');
    expect(after.stats).toEqual({
      totalMessages: 5,
      successfulMessages: 3,
      failedMessages: 2,
      activeSessions: 0,
      repliedMessages: 0,
      skippedMessages: 0,
    });
    expect(after.usage.messages_sent_count).toBe(3);
    const byRecipient = new Map(after.messages.map((m) => [m.recipient, m]));
    expect(byRecipient.get(sent[0]!)).toMatchObject({
      status: 'delivered',
      content: `Hello ${sent[0]}, your order is ready`,
    });
    expect(byRecipient.get(sent[1]!)?.status).toBe('read');
  });

  it('counts the same event once, however often it reaches the stream', async () => {
    const { userId } = users.bob;
    const e = messageEvent(userId, 'job-dup', '85292000001', 'sent');
    await producer.message(e);
    await producer.message(e); // dropped by the stream's duplicate window (same message id)
    const first = await producer.republishRaw('events.message.status', e); // stored again: the dashboard must skip it
    const second = await producer.republishRaw('events.message.status', e);
    expect(second).toBe(first + 1);
    // A different event for the same message (a retried send reporting again) is not a second message either.
    await producer.message({ ...messageEvent(userId, 'job-dup', '85292000001', 'sent') });
    await producer.waitApplied();

    const data = await dashboard('bob');
    expect(data.stats.totalMessages).toBe(1);
    expect(data.stats.successfulMessages).toBe(1);
    expect(data.usage.messages_sent_count).toBe(1);
    expect(data.messages).toHaveLength(1);
  });

  it('moves statuses only forward when they arrive out of order', async () => {
    const { userId } = users.bob;
    const t0 = Date.now() - 10_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    // read, delivered and sent of one message, published in reverse.
    await producer.message(messageEvent(userId, 'job-ooo', '85292000002', 'read', { at: at(3), content: '' }));
    await producer.message(messageEvent(userId, 'job-ooo', '85292000002', 'delivered', { at: at(2), content: '' }));
    await producer.message(messageEvent(userId, 'job-ooo', '85292000002', 'sent', { at: at(0) }));
    // failed first, then a late sent for the same key: the first terminal status stands.
    await producer.message(
      messageEvent(userId, 'job-ooo', '85292000003', 'failed', { at: at(1), error: 'Session closed' }),
    );
    await producer.message(messageEvent(userId, 'job-ooo', '85292000003', 'sent', { at: at(2) }));
    await producer.waitApplied();

    const data = await dashboard('bob');
    const m = new Map(data.messages.map((x) => [x.recipient, x]));
    expect(m.get('85292000002')).toMatchObject({
      status: 'read',
      sent_at: at(0),
      content: 'Hello 85292000002, your order is ready',
    });
    expect(m.get('85292000003')).toMatchObject({ status: 'failed', error: 'Session closed' });
    // bob: 1 (previous test) + 2 here
    expect(data.stats).toMatchObject({ totalMessages: 3, successfulMessages: 2, failedMessages: 1 });
    expect(data.usage.messages_sent_count).toBe(2);
    expect(data.usage.messages_failed_count).toBe(1);
  });

  it('tracks the WhatsApp link from session events, ignoring a stale one', async () => {
    const { userId } = users.ann;
    const t = Date.now();
    await producer.session(
      sessionEvent(userId, 'ready', {
        sessionId: 'sess-1',
        phoneNumber: '85291234567',
        at: new Date(t - 5000).toISOString(),
      }),
    );
    await producer.waitApplied();
    let data = await dashboard('ann');
    expect(data.stats.activeSessions).toBe(1);
    expect(data.sessions).toEqual([
      expect.objectContaining({ id: 'sess-1', phoneNumber: '85291234567', active: true }),
    ]);
    expect((await dashboard('bob')).stats.activeSessions).toBe(0);

    await producer.session(sessionEvent(userId, 'disconnected', { at: new Date(t - 1000).toISOString() }));
    // An 'exist' that happened before the disconnect but arrives after it must not revive the link.
    await producer.session(
      sessionEvent(userId, 'exist', {
        sessionId: 'sess-1',
        phoneNumber: '85291234567',
        at: new Date(t - 3000).toISOString(),
      }),
    );
    await producer.waitApplied();
    data = await dashboard('ann');
    expect(data.stats.activeSessions).toBe(0);
    expect(data.sessions[0]).toMatchObject({ id: 'sess-1', active: false });

    await producer.session(sessionEvent(userId, 'ready', { sessionId: 'sess-2', phoneNumber: '85297654321' }));
    await producer.waitApplied();
    data = await dashboard('ann');
    expect(data.stats.activeSessions).toBe(1);
    expect(data.sessions[0]).toMatchObject({ id: 'sess-2', phoneNumber: '85297654321', active: true });
  });
});

describe('replies (events.message.received)', () => {
  it('shows the answered message as replied, counts it once, and never shows it to another user', async () => {
    const cy = await devSignIn(sys.gateway.url, 'cy@shop.hk');
    const http = api(sys.gateway.url, cy.token);
    const recipient = '91234599';
    await producer.message(
      messageEvent(cy.userId, 'job-r', recipient, 'sent', { at: new Date(Date.now() - 5000).toISOString() }),
    );
    await producer.message(
      messageEvent(cy.userId, 'job-r', '91234598', 'sent', { at: new Date(Date.now() - 5000).toISOString() }),
    );
    await producer.waitApplied();

    // As WhatsApp names the sender; the job sent to the 8 digits.
    const answer = receivedEvent(cy.userId, `852${recipient}`, `Yes, I'll come at 3. ${'x'.repeat(300)}`);
    await producer.received(answer);
    await producer.received(answer); // dropped by the stream's duplicate window
    await producer.republishRaw('events.message.received', answer); // stored again: skipped by the dashboard
    await producer.received(receivedEvent(cy.userId, recipient, 'and thanks!'));
    await producer.waitApplied();

    const res = await http.get(`/api/dashboard/${cy.userId}`);
    expect(res.status).toBe(200);
    const data = res.body.data as DashboardData;
    expect(data.stats).toEqual({
      totalMessages: 2,
      successfulMessages: 2,
      failedMessages: 0,
      activeSessions: 0,
      repliedMessages: 1,
      skippedMessages: 0,
    });
    const m = new Map(data.messages.map((x) => [x.recipient, x]));
    expect(m.get(recipient)).toMatchObject({
      status: 'sent',
      replied_at: answer.at,
      reply: answer.text.slice(0, LIMITS.replyPreviewMax),
    });
    expect(m.get('91234598')).toMatchObject({ replied_at: null, reply: null });
    expect((await dashboard('ann', '?limit=100')).stats.repliedMessages).toBe(0);
  });
});

describe('GET /api/dashboard/{userId}', () => {
  it('answers 10 recent messages by default and up to ?limit=100, refusing anything else', async () => {
    const { userId } = users.ann;
    for (let i = 0; i < 14; i++)
      await producer.message(
        messageEvent(userId, 'job-many', `8529300${String(i).padStart(4, '0')}`, 'sent', { content: 'x'.repeat(150) }),
      );
    await producer.waitApplied();

    const byDefault = await dashboard('ann');
    expect(byDefault.messages).toHaveLength(LIMITS.dashboardRecentMessages);
    // Full content: the web, not the API, cuts it at 100 characters.
    expect(byDefault.messages[0]!.content).toHaveLength(150);
    expect(byDefault.messages[0]!.recipient).toBe('85293000013');
    expect((await dashboard('ann', '?limit=3')).messages.map((m) => m.recipient)).toEqual([
      '85293000013',
      '85293000012',
      '85293000011',
    ]);
    expect((await dashboard('ann', '?limit=100')).messages).toHaveLength(19);

    for (const bad of ['0', '101', 'abc', '2.5', '-1']) {
      const res = await users.ann.http.get(`/api/dashboard/${userId}?limit=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: DASHBOARD_MESSAGES.invalidLimit });
    }
  });

  it("keeps each user to their own data: 403 for another user's path, and no message of A in B's answer", async () => {
    const res = await users.bob.http.get(`/api/dashboard/${users.ann.userId}`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, error: MESSAGES.forbidden });
    const asBob = await users.bob.http.post('/api/user/preferences', {
      clerkUserId: users.ann.userId,
      preferences: { auto_login_message_enabled: false },
    });
    expect(asBob.status).toBe(403);

    const bob = await dashboard('bob', '?limit=100');
    expect(bob.user.id).toBe(users.bob.userId);
    expect(bob.messages.length).toBeGreaterThan(0);
    expect(bob.messages.every((m) => m.job_id === 'job-dup' || m.job_id === 'job-ooo')).toBe(true);
    const ann = await dashboard('ann', '?limit=100');
    expect(ann.messages.some((m) => m.job_id.startsWith('job-dup') || m.job_id === 'job-ooo')).toBe(false);
    // Ann's preference was not touched by Bob's attempt.
    expect(ann.user.preferences.auto_login_message_enabled).toBe(true);
  });
});

describe('preferences', () => {
  it('round-trips through HTTP and answers the sessions service over NATS', async () => {
    const { userId, http } = users.bob;
    const rpc = new RpcClient(nc, { shards: 2, timeoutMs: 5000 });
    expect((await dashboard('bob')).user.preferences).toEqual({ auto_login_message_enabled: true });
    expect(await rpc.call('dashboard.preferences.get', { userId })).toEqual({ auto_login_message_enabled: true });

    const off = await http.post('/api/user/preferences', {
      clerkUserId: userId,
      preferences: { auto_login_message_enabled: false },
    });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, preferences: { auto_login_message_enabled: false } });
    expect((await dashboard('bob')).user).toEqual({ id: userId, preferences: { auto_login_message_enabled: false } });
    expect(await rpc.call('dashboard.preferences.get', { userId })).toEqual({ auto_login_message_enabled: false });
    // Another user's default is untouched.
    expect(await rpc.call('dashboard.preferences.get', { userId: users.ann.userId })).toEqual({
      auto_login_message_enabled: true,
    });

    const on = await http.post('/api/user/preferences', {
      clerkUserId: userId,
      preferences: { auto_login_message_enabled: true },
    });
    expect(on.body.preferences).toEqual({ auto_login_message_enabled: true });
    expect(await rpc.call('dashboard.preferences.get', { userId })).toEqual({ auto_login_message_enabled: true });
  });

  it('refuses a preference that is not a boolean', async () => {
    const { userId, http } = users.bob;
    for (const preferences of [{ auto_login_message_enabled: 'false' }, { auto_login_message_enabled: 1 }, {}]) {
      const res = await http.post('/api/user/preferences', { clerkUserId: userId, preferences });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: DASHBOARD_MESSAGES.autoLoginMessageNotBoolean });
    }
    const noObject = await http.post('/api/user/preferences', { clerkUserId: userId });
    expect(noObject.status).toBe(400);
    expect(noObject.body.error).toBe(DASHBOARD_MESSAGES.preferencesRequired);
  });
});

describe('when the dashboard service is down', () => {
  it.each([
    ['killed', (h: ServiceHandle) => h.kill9()],
    ['stopped', (h: ServiceHandle) => h.stop()],
  ])(
    'misses nothing published while it was %s, and applies each event once',
    async (how, takeDown) => {
      const { userId } = users.ann;
      const before = (await dashboard('ann')).stats;
      const usageBefore = (await dashboard('ann')).usage;
      const handle = restarted ?? sys.services.find((s) => s.name === 'dashboard')!;
      const total = 300;
      let published = 0;
      const publishing = (async () => {
        for (let i = 0; i < total; i++) {
          const status = i % 5 === 4 ? 'failed' : 'sent';
          await producer.message(
            messageEvent(userId, `job-outage-${how}`, `8529400${String(i).padStart(4, '0')}`, status),
          );
          published++;
          if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await waitFor(() => published >= 60, 20_000);
      await takeDown(handle);

      // The dashboard's failure reaches the web as {success:false, error} ("Error loading dashboard").
      const down = await users.ann.http.get(`/api/dashboard/${userId}`);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ success: false, error: MESSAGES.serviceUnavailable });

      await publishing;
      restarted = await sys.start('dashboard');
      await producer.waitApplied(60_000);

      const after = await dashboard('ann');
      expect(after.stats.totalMessages - before.totalMessages).toBe(total);
      expect(after.stats.failedMessages - before.failedMessages).toBe(total / 5);
      expect(after.stats.successfulMessages - before.successfulMessages).toBe((total * 4) / 5);
      expect(after.usage.messages_sent_count - usageBefore.messages_sent_count).toBe((total * 4) / 5);
      expect(after.usage.messages_failed_count - usageBefore.messages_failed_count).toBe(total / 5);
      expect(after.usage.monthly.at(-1)).toEqual({
        month: thisMonth(),
        sent: after.usage.messages_sent_count,
        failed: after.usage.messages_failed_count,
      });
    },
    120_000,
  );
});
