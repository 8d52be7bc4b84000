import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  DEFAULT_OPT_OUT_SETTINGS,
  MESSAGES,
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  optOutConfirmationKey,
  type OptOutEntry,
} from '@bns/contracts';
import { EventBus } from '@bns/service-kit';
import {
  simulatorInbound,
  simulatorOutbox,
  sleep,
  startSystem,
  waitFor,
  type ApiResponse,
  type ServiceHandle,
  type System,
} from '@bns/testing';
import { isFinished, numbers, outboxOf, signIn, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const DELAY_MS = 300;
const NOT_ON_WHATSAPP = '69999999';

/**
 * Opt-outs against the real services (jobs, sessions with the simulated engine, gateway, Postgres,
 * NATS). Inbound messages take the real path where it is cheap (`POST /dev/simulator/inbound`: the
 * simulated phone receives it, the sessions outbox publishes `events.message.received`); elsewhere
 * they are published to JetStream directly, as the sessions service publishes them, with the same
 * typed EventBus (an event id the test chooses, a malformed event, events while jobs is down).
 */
describe('opt-outs: STOP keywords, the list, and skipping at start and mid-job', () => {
  let sys: System;
  let ann: User;
  let bob: User;
  let nc: NatsConnection;
  let bus: EventBus;
  const jobsHandles: ServiceHandle[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      // What opt-outs touch; templates and dashboard only add load to a shared machine.
      services: ['jobs', 'sessions'],
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50', SIM_FAIL_NUMBERS: NOT_ON_WHATSAPP },
      serviceEnv: {
        jobs: { SEND_DELAY_MS: String(DELAY_MS), OPT_OUTS_ACK_WAIT_MS: '1000' },
        // The tests poll the list every 25 ms.
        gateway: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
      },
    });
    [ann, bob] = await Promise.all([
      signInLinked(sys.gateway.url, 'ann-optouts@example.com'),
      signIn(sys.gateway.url, 'bob-optouts@example.com'),
    ]);
    nc = await connect({ servers: sys.nats.url });
    bus = new EventBus(nc);
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    bob?.tab.close();
    await nc?.close();
    await Promise.all(jobsHandles.map((h) => h.stop()));
    await sys?.stop();
  });

  /** A message from `from` arriving on the user's WhatsApp, published as sessions publishes it. */
  async function inbound(user: User, from: string, text: string): Promise<string> {
    const eventId = randomUUID();
    await bus.emit('events.message.received', {
      eventId,
      userId: user.userId,
      from,
      text,
      at: new Date().toISOString(),
      messageId: `sim-${eventId}`,
    });
    return eventId;
  }

  async function listOf(user: User, query = ''): Promise<OptOutEntry[]> {
    const res = await user.client.get(`/api/opt-outs/${user.userId}${query}`);
    expect(res.status).toBe(200);
    return res.body.optOuts;
  }

  const listed = (user: User, phone: string, timeoutMs = 5000) =>
    waitFor(
      async () => (await listOf(user)).find((o) => o.phoneNumber === phone),
      timeoutMs,
      25,
      `${phone} on the list`,
    );

  it('an inbound STOP is on the list within 1 s, reason keyword; other words are not', async () => {
    const started = Date.now();
    await inbound(ann, '85291110001', ' stop ');
    const entry = await listed(ann, '91110001', 1000);
    const elapsed = Date.now() - started;
    expect(entry).toEqual({ phoneNumber: '91110001', reason: 'keyword', at: expect.any(String) });
    expect(elapsed).toBeLessThan(1000);

    // The real path: the simulated phone receives it, the sessions outbox publishes it.
    await simulatorInbound(ann.gatewayUrl, ann.token, '91110004', 'STOP');
    expect(await listed(ann, '91110004')).toEqual({
      phoneNumber: '91110004',
      reason: 'keyword',
      at: expect.any(String),
    });

    await inbound(ann, '85291110002', 'please stop sending me these');
    await inbound(ann, '85291110003@c.us', '取消訂閱');
    await listed(ann, '91110003');
    expect((await listOf(ann)).map((o) => o.phoneNumber)).not.toContain('91110002');
  });

  it('a job started afterwards skips the opted-out number and reports it as skipped', async () => {
    await inbound(ann, '85291110010', 'UNSUBSCRIBE');
    await listed(ann, '91110010');
    const check = await ann.client.post(`/api/opt-outs/${ann.userId}/check`, {
      phoneNumbers: ['91110011', '91110010', '91110012'],
    });
    expect(check.body).toEqual({ success: true, optedOut: ['91110010'], notOnWhatsApp: [] });

    const jobId = await startJob(ann, {
      message: 'After the STOP',
      phoneNumbers: ['91110011', '91110010', '91110012'],
    });
    const done = await waitForJob(ann, jobId, isFinished, 20_000);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: 3, sent: 2, failed: 0, skipped: 1 });
    expect(done.results.skippedList).toEqual([
      { phoneNumber: '91110010', reason: 'opted_out', timestamp: expect.any(String) },
    ]);
    expect((await outboxOf(ann, jobId)).map((m) => m.to)).toEqual(['91110011', '91110012']);

    // Every recipient opted out: the job is accepted, sends nothing and completes.
    const none = await startJob(ann, { message: 'Nobody left', phoneNumbers: ['91110010'] });
    const empty = await waitForJob(ann, none, isFinished, 20_000);
    expect([empty.status, empty.progress]).toEqual(['completed', { total: 1, sent: 0, failed: 0, skipped: 1 }]);
    expect(await outboxOf(ann, none)).toEqual([]);
  });

  it('a STOP that arrives mid-job from a recipient later in the list: that number never gets the message', async () => {
    const phones = numbers(8, 91_120_000);
    const late = phones[6]!;
    const jobId = await startJob(ann, { message: 'Mid-job', phoneNumbers: phones });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 10_000, 'the first send');
    // The recipient replies on WhatsApp: the real inbound path, sessions → JetStream → jobs.
    await simulatorInbound(ann.gatewayUrl, ann.token, late, 'Stop');
    const done = await waitForJob(ann, jobId, isFinished, 30_000);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: 8, sent: 7, failed: 0, skipped: 1 });
    expect(done.results.skippedList).toEqual([
      { phoneNumber: late, reason: 'opted_out', timestamp: expect.any(String) },
    ]);
    const sent = (await outboxOf(ann, jobId)).map((m) => m.to);
    expect(sent).toHaveLength(7);
    expect(sent).not.toContain(late);
    const logs = (await ann.client.get(`/job-logs/${jobId}`)).body.logs.map((l: { message: string }) => l.message);
    expect(logs).toContain(OPT_OUT_MESSAGES.skippedMidJob(late, 'opted_out'));

    // The per-recipient report has every recipient exactly once, the skipped one included,
    // across pages; and the skipped filter finds it alone.
    const seen: { phoneNumber: string; status: string; error?: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse = await ann.client.get(
        `/job-results/${jobId}?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.results);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.map((r) => r.phoneNumber).sort()).toEqual([...phones].sort());
    expect(seen.find((r) => r.phoneNumber === late)).toMatchObject({ status: 'skipped', error: 'opted_out' });
    const onlySkipped = await ann.client.get(`/job-results/${jobId}?status=skipped`);
    expect(onlySkipped.body.results.map((r: { phoneNumber: string }) => r.phoneNumber)).toEqual([late]);
  });

  it('a STOP that names its sender by LID only, mid-job: the number the account knows for that LID never gets the message', async () => {
    // The account wrote to this number before: WhatsApp named its LID then, and the account kept the pair.
    const phones = numbers(8, 91_125_000);
    const late = phones[6]!;
    const earlier = await startJob(ann, { message: 'Earlier', phoneNumbers: [late] });
    await waitForJob(ann, earlier, isFinished, 20_000);
    const [{ lid }] = await outboxOf(ann, earlier);
    expect(lid).toMatch(/^\d+@lid$/);

    const jobId = await startJob(ann, { message: 'Mid-job by LID', phoneNumbers: phones });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 1, 10_000, 'the first send');
    // The reply carries the LID alone, no number (as WhatsApp sends more and more of them).
    const stop = await ann.client.post('/dev/simulator/inbound', { lid, text: 'STOP' });
    expect(stop.status).toBe(200);
    const done = await waitForJob(ann, jobId, isFinished, 30_000);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: 8, sent: 7, failed: 0, skipped: 1 });
    expect(done.results.skippedList).toEqual([
      { phoneNumber: late, reason: 'opted_out', timestamp: expect.any(String) },
    ]);
    const sent = (await outboxOf(ann, jobId)).map((m) => m.to);
    expect(sent).toHaveLength(7);
    expect(sent.map((to) => to.slice(-8))).not.toContain(late);
    expect((await listed(ann, late)).reason).toBe('keyword');
  });

  it('a number WhatsApp does not know fails once, then later jobs skip it (not_on_whatsapp) without asking WhatsApp again', async () => {
    const first = await startJob(ann, { message: 'Who is this', phoneNumbers: ['91130001', NOT_ON_WHATSAPP] });
    const one = await waitForJob(ann, first, isFinished, 20_000);
    expect(one.progress).toEqual({ total: 2, sent: 1, failed: 1 });

    const second = await startJob(ann, { message: 'Again', phoneNumbers: [NOT_ON_WHATSAPP, '91130002'] });
    const two = await waitForJob(ann, second, isFinished, 20_000);
    expect(two.progress).toEqual({ total: 2, sent: 1, failed: 0, skipped: 1 });
    expect(two.results.failedList).toEqual([]);
    expect(two.results.skippedList).toEqual([
      { phoneNumber: NOT_ON_WHATSAPP, reason: 'not_on_whatsapp', timestamp: expect.any(String) },
    ]);
    // Another account has its own memory: nothing is skipped for Bob.
    expect(
      (await bob.client.post(`/api/opt-outs/${bob.userId}/check`, { phoneNumbers: [NOT_ON_WHATSAPP] })).body
        .notOnWhatsApp,
    ).toEqual([]);
  });

  it('manual add, import, remove, paging and the CSV export', async () => {
    const add = await bob.client.post(`/api/opt-outs/${bob.userId}`, {
      phoneNumbers: ['+852 9140 0001', '85291400002', '91400002', '9140-0003'],
    });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ success: true, added: 3, alreadyListed: 0 });
    const imported = numbers(120, 92_000_000);
    expect(
      (await bob.client.post(`/api/opt-outs/${bob.userId}`, { phoneNumbers: [...imported, '91400001'] })).body,
    ).toEqual({
      success: true,
      added: 120,
      alreadyListed: 1,
    });

    const first = await bob.client.get(`/api/opt-outs/${bob.userId}?limit=50`);
    expect(first.body.optOuts).toHaveLength(50);
    expect(first.body.total).toBe(123);
    const seen = new Set<string>(first.body.optOuts.map((o: OptOutEntry) => o.phoneNumber));
    let cursor: string | null = first.body.nextCursor;
    while (cursor) {
      const page = await bob.client.get(`/api/opt-outs/${bob.userId}?limit=50&cursor=${encodeURIComponent(cursor)}`);
      for (const o of page.body.optOuts as OptOutEntry[]) seen.add(o.phoneNumber);
      cursor = page.body.nextCursor;
    }
    expect(seen.size).toBe(123);
    expect((await listOf(bob, '?q=9140000')).map((o) => o.phoneNumber).sort()).toEqual([
      '91400001',
      '91400002',
      '91400003',
    ]);

    expect((await bob.client.delete(`/api/opt-outs/${bob.userId}/85291400002`)).status).toBe(200);
    const again = await bob.client.delete(`/api/opt-outs/${bob.userId}/91400002`);
    expect([again.status, again.body.error]).toEqual([404, OPT_OUT_MESSAGES.notListed]);

    const csv = await fetch(`${sys.gateway.url}/api/opt-outs/${bob.userId}/export?format=csv`, {
      headers: { authorization: `Bearer ${bob.token}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toContain('opt-outs.csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('phoneNumber,reason,at');
    expect(lines).toHaveLength(123);
    expect(lines.slice(1).every((l) => /^\d{8},manual,\d{4}-\d\d-\d\dT/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('91400002,'))).toBe(false);
  });

  it("another user's list is never visible or editable (403 on their path, 404 on one's own)", async () => {
    await inbound(ann, '85291150001', 'STOP');
    await listed(ann, '91150001');
    for (const res of [
      await bob.client.get(`/api/opt-outs/${ann.userId}`),
      await bob.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: ['91150002'] }),
      await bob.client.delete(`/api/opt-outs/${ann.userId}/91150001`),
      await bob.client.get(`/api/opt-outs/${ann.userId}/export?format=csv`),
      await bob.client.get(`/api/opt-outs/${ann.userId}/settings`),
      await bob.client.put(`/api/opt-outs/${ann.userId}/settings`, { keywords: ['X'] }),
      await bob.client.post(`/api/opt-outs/${ann.userId}/check`, { phoneNumbers: ['91150001'] }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe(MESSAGES.forbidden);
    }
    expect((await bob.client.delete(`/api/opt-outs/${bob.userId}/91150001`)).status).toBe(404);
    expect((await listOf(bob)).map((o) => o.phoneNumber)).not.toContain('91150001');
    // A STOP to Bob's account does not touch Ann's list, and the other way round.
    await inbound(bob, '85291150009', 'STOP');
    await listed(bob, '91150009');
    expect((await listOf(ann)).map((o) => o.phoneNumber)).not.toContain('91150009');
    expect((await api401()).status).toBe(401);
  });

  const api401 = () => fetch(`${sys.gateway.url}/api/opt-outs/${ann.userId}`);

  it('keyword settings: editable, refused when empty or oversized, and the optional confirmation reply goes out once', async () => {
    expect((await bob.client.get(`/api/opt-outs/${bob.userId}/settings`)).body).toEqual({
      success: true,
      settings: DEFAULT_OPT_OUT_SETTINGS,
    });
    const empty = await ann.client.put(`/api/opt-outs/${ann.userId}/settings`, { keywords: [] });
    expect([empty.status, empty.body.error]).toEqual([400, OPT_OUT_MESSAGES.keywordsEmpty]);
    const tooMany = await ann.client.put(`/api/opt-outs/${ann.userId}/settings`, {
      keywords: Array.from({ length: OPT_OUT_LIMITS.keywordsMax + 1 }, (_, i) => `K${i}`),
    });
    expect([tooMany.status, tooMany.body.error]).toEqual([400, OPT_OUT_MESSAGES.keywordsTooMany]);
    const tooLong = await ann.client.put(`/api/opt-outs/${ann.userId}/settings`, {
      keywords: ['x'.repeat(OPT_OUT_LIMITS.keywordMaxLength + 1)],
    });
    expect([tooLong.status, tooLong.body.error]).toEqual([400, OPT_OUT_MESSAGES.keywordTooLong]);

    const saved = await ann.client.put(`/api/opt-outs/${ann.userId}/settings`, {
      keywords: ['STOP', 'Basta'],
      confirmationEnabled: true,
      confirmationText: 'Done: no more messages from us.',
    });
    expect(saved.body).toEqual({
      success: true,
      settings: {
        keywords: ['STOP', 'Basta'],
        confirmationEnabled: true,
        confirmationText: 'Done: no more messages from us.',
      },
    });

    const eventId = await inbound(ann, '85291160001', 'basta');
    await listed(ann, '91160001');
    const key = optOutConfirmationKey(eventId, '91160001');
    const reply = await waitFor(
      async () => (await simulatorOutbox(ann.gatewayUrl, ann.token)).find((m) => m.idempotencyKey === key),
      5000,
      50,
      'the confirmation reply',
    );
    expect(reply).toMatchObject({ to: '91160001', text: 'Done: no more messages from us.' });
    // 退訂 is no longer a keyword for Ann.
    await inbound(ann, '85291160002', '退訂');
    await sleep(500);
    expect((await listOf(ann)).map((o) => o.phoneNumber)).not.toContain('91160002');
    await ann.client.put(`/api/opt-outs/${ann.userId}/settings`, { ...DEFAULT_OPT_OUT_SETTINGS });
  });

  it('bad input gets a clear 400, never a 500', async () => {
    const cases: [Promise<{ status: number; body: any }>, string][] = [
      [
        ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: ['91234567', '1234', 'abc'] }),
        OPT_OUT_MESSAGES.invalidPhoneNumbers(['1234', 'abc']),
      ],
      [ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: [] }), MESSAGES.addPhoneNumbersFirst],
      [ann.client.post(`/api/opt-outs/${ann.userId}`, {}), MESSAGES.addPhoneNumbersFirst],
      [
        ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: '91234567' }),
        OPT_OUT_MESSAGES.phoneNumbersNotAList,
      ],
      [
        ann.client.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: numbers(OPT_OUT_LIMITS.addMax + 1) }),
        OPT_OUT_MESSAGES.tooManyPhoneNumbers,
      ],
      [ann.client.delete(`/api/opt-outs/${ann.userId}/12ab`), OPT_OUT_MESSAGES.invalidPhoneNumbers(['12ab'])],
      [ann.client.get(`/api/opt-outs/${ann.userId}?limit=abc`), OPT_OUT_MESSAGES.invalidLimit],
      [ann.client.get(`/api/opt-outs/${ann.userId}?limit=100000`), OPT_OUT_MESSAGES.invalidLimit],
      [ann.client.get(`/api/opt-outs/${ann.userId}?cursor=garbage`), OPT_OUT_MESSAGES.invalidCursor],
      [ann.client.get(`/api/opt-outs/${ann.userId}?q=abc`), OPT_OUT_MESSAGES.invalidSearch],
      [ann.client.get(`/api/opt-outs/${ann.userId}/export?format=xml`), OPT_OUT_MESSAGES.invalidExportFormat],
      [ann.client.put(`/api/opt-outs/${ann.userId}/settings`, [1, 2]), OPT_OUT_MESSAGES.settingsNotAnObject],
      [ann.client.put(`/api/opt-outs/${ann.userId}/settings`, { keywords: 'STOP' }), OPT_OUT_MESSAGES.keywordsNotAList],
      [
        ann.client.put(`/api/opt-outs/${ann.userId}/settings`, { confirmationEnabled: 'yes' }),
        OPT_OUT_MESSAGES.confirmationEnabledNotBoolean,
      ],
      [
        ann.client.put(`/api/opt-outs/${ann.userId}/settings`, { confirmationText: ' ' }),
        OPT_OUT_MESSAGES.confirmationTextRequired,
      ],
    ];
    for (const [call, message] of cases) {
      const res = await call;
      expect([res.status, res.body.success, res.body.error]).toEqual([400, false, message]);
    }
    // A malformed inbound event is dropped, and the consumer keeps going.
    await nc.publish('events.message.received', JSON.stringify({ nonsense: true }));
    await inbound(ann, '85291170001', 'STOP');
    await listed(ann, '91170001');
  });

  it('kill -9 of jobs mid-flow loses no opt-out: what was in flight or published while it was down is applied after the restart', async () => {
    const jobs = sys.services.find((h) => h.name === 'jobs')!;
    const burst = numbers(20, 91_180_000);
    await Promise.all(burst.slice(0, 10).map((p) => inbound(ann, `852${p}`, 'STOP')));
    await jobs.kill9();
    await Promise.all(burst.slice(10).map((p) => inbound(ann, `852${p}`, 'STOP')));
    jobsHandles.push(await sys.start('jobs'));
    const all = await waitFor(
      async () => {
        const list = await listOf(ann, `?limit=${OPT_OUT_LIMITS.listPageMax}&q=9118`);
        return list.length === burst.length ? list : undefined;
      },
      20_000,
      100,
      'every STOP applied after the restart',
    );
    expect(all.map((o) => o.phoneNumber).sort()).toEqual(burst);
    expect(all.every((o) => o.reason === 'keyword')).toBe(true);
  }, 60_000);
});
