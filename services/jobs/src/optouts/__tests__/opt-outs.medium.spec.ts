import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import {
  DEFAULT_OPT_OUT_SETTINGS,
  OPTED_OUT_SUBJECT,
  ErrorKind,
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  OptOutsErrorCode,
  SessionsErrorCode,
  type JobView,
  type MessageReceivedEvent,
} from '@bns/contracts';
import { AppError, mintJobId, NATS_CONNECTION, RpcClient, rows } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobIdSchemeRepository } from '../../store/job-id-scheme.repository.js';
import { JobLogsRepository } from '../../events/job-logs.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { LaneQueue, type NextStep, type PlannedSend } from '../../queue/lane-queue.js';
import { LaneStepRepository } from '../../queue/lane-step.repository.js';
import { OptOutsRepository } from '../opt-outs.repository.js';
import { OptOutsService } from '../opt-outs.service.js';

/** A timestamp as Date.toISOString() writes it. */
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** The skipped list of a job's status answer as stored (JobsRepository.statusOf). */
const skippedOf = (row: { resultsJson: string } | undefined) =>
  (JSON.parse(row!.resultsJson) as JobView['results']).skippedList;

/**
 * The opt-outs repository, service and lane hooks in-process against a real Postgres (the jobs data
 * layer of `startInProcess`: no NATS, no spawned services). The confirmation reply is off in these
 * tests, so nothing asks the sessions service; the RpcClient given here fails the test if anything does.
 */
describe('opt-outs repository and service (in-process, real Postgres)', () => {
  let app: InProcess;
  let ds: DataSource;
  let repo: OptOutsRepository;
  let steps: LaneStepRepository;
  let service: OptOutsService;
  let userId: string;
  const DAYS = 30;
  const notices: { subject: string; userId: string; phones: string[] }[] = [];
  const noticesOf = (user: string) => notices.filter((n) => n.userId === user).map((n) => [n.subject, n.phones]);

  beforeAll(async () => {
    const noRpc = {
      call: () => {
        throw new Error('the sessions service must not be asked in these tests');
      },
    };
    // What the service announces to the lane workers (core NATS publish), recorded.
    const announcer = {
      publish: (subject: string, data: string) =>
        notices.push({ subject, ...(JSON.parse(data) as { userId: string; phones: string[] }) }),
    };
    app = await startInProcess({ SEND_DELAY_MS: '0', NOT_ON_WHATSAPP_MEMORY_DAYS: String(DAYS) }, [
      OptOutsService,
      { provide: RpcClient, useValue: noRpc },
      { provide: NATS_CONNECTION, useValue: announcer },
    ]);
    ds = app.db;
    repo = app.get(OptOutsRepository);
    steps = app.get(LaneStepRepository);
    service = app.get(OptOutsService);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  beforeEach(() => {
    userId = `user_${randomUUID()}`;
  });

  const inbound = (text: string, from = '85291234567', eventId = randomUUID()): MessageReceivedEvent => ({
    eventId,
    userId,
    from,
    text,
    at: new Date().toISOString(),
    messageId: `m-${eventId}`,
  });

  /** Entries are timed to the millisecond: keep the order these tests expect unambiguous. */
  const tick = () => new Promise((r) => setTimeout(r, 3));

  async function refusal(p: Promise<unknown>): Promise<AppError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }

  it('an inbound keyword (whole message, trimmed, any case, defaults) lists the sender with reason keyword', async () => {
    expect(await service.handleInbound(inbound('  stop  '))).toBe('opted_out');
    await tick();
    expect(await service.handleInbound(inbound('退訂', '+852 6123 4567'))).toBe('opted_out');
    expect(await service.handleInbound(inbound('please stop', '85251234567'))).toBe('not_a_keyword');
    expect(await service.handleInbound(inbound('Unsubscribe', '85251234567@g.us'))).toBe('not_a_recipient');
    const list = await service.list({ userId });
    expect(list.optOuts.map((o) => [o.phoneNumber, o.reason])).toEqual([
      ['61234567', 'keyword'],
      ['91234567', 'keyword'],
    ]);
    expect(list.total).toBe(2);
    expect(list.nextCursor).toBeNull();
    // Each new opt-out is announced once committed, so a send prepared for the number is withheld.
    expect(noticesOf(userId)).toEqual([
      [OPTED_OUT_SUBJECT, ['91234567']],
      [OPTED_OUT_SUBJECT, ['61234567']],
    ]);
  });

  it('is idempotent: a redelivered event and a second STOP change nothing', async () => {
    const event = inbound('STOP');
    expect(await service.handleInbound(event)).toBe('opted_out');
    const first = (await service.list({ userId })).optOuts;
    expect(await service.handleInbound(event)).toBe('opted_out');
    expect(await service.handleInbound(inbound('stop'))).toBe('already_opted_out');
    expect((await service.list({ userId })).optOuts).toEqual(first);
  });

  it('pages newest first with a cursor, searches digits, and never shows another user’s list', async () => {
    const phones = ['91000001', '91000002', '91000003', '62000004', '91000005'];
    for (const p of phones) {
      await service.add({ userId, phoneNumbers: [p] });
      await tick();
    }
    await service.add({ userId: `${userId}-other`, phoneNumbers: ['93333333'] });

    const one = await service.list({ userId, limit: 2 });
    expect(one.optOuts.map((o) => o.phoneNumber)).toEqual(['91000005', '62000004']);
    const two = await service.list({ userId, limit: 2, cursor: one.nextCursor! });
    expect(two.optOuts.map((o) => o.phoneNumber)).toEqual(['91000003', '91000002']);
    const three = await service.list({ userId, limit: 2, cursor: two.nextCursor! });
    expect(three.optOuts.map((o) => o.phoneNumber)).toEqual(['91000001']);
    expect(three.nextCursor).toBeNull();
    expect(three.total).toBe(5);

    expect((await service.list({ userId, q: '6200' })).optOuts.map((o) => o.phoneNumber)).toEqual(['62000004']);
    expect((await service.list({ userId, q: '9333' })).optOuts).toEqual([]);
    expect((await service.list({ userId: `${userId}-other` })).optOuts.map((o) => o.phoneNumber)).toEqual(['93333333']);

    expect((await refusal(service.list({ userId, cursor: 'not-a-cursor' }))).message).toBe(
      OPT_OUT_MESSAGES.invalidCursor,
    );
    expect((await refusal(service.list({ userId, limit: 0 }))).message).toBe(OPT_OUT_MESSAGES.invalidLimit);
    expect((await refusal(service.list({ userId, q: 'abc' }))).message).toBe(OPT_OUT_MESSAGES.invalidSearch);
  });

  it('adds by hand (normalised, merged, reason manual), refuses malformed numbers with the spec’s words, removes', async () => {
    expect(await service.add({ userId, phoneNumbers: ['+852 9123 4567', '91234567', '85261234567'] })).toEqual({
      added: 2,
      alreadyListed: 0,
    });
    expect(await service.add({ userId, phoneNumbers: ['61234567', '51234567'] })).toEqual({
      added: 1,
      alreadyListed: 1,
    });
    // Only the numbers newly listed are announced.
    expect(noticesOf(userId)).toEqual([
      [OPTED_OUT_SUBJECT, ['91234567', '61234567']],
      [OPTED_OUT_SUBJECT, ['51234567']],
    ]);
    const list = await service.list({ userId });
    expect(list.optOuts.every((o) => o.reason === 'manual')).toBe(true);
    expect(list.total).toBe(3);

    const bad = await refusal(service.add({ userId, phoneNumbers: ['91234567', '123', 'abc'] }));
    expect(bad.kind).toBe(ErrorKind.Validation);
    expect(bad.code).toBe(OptOutsErrorCode.InvalidPhoneNumbers);
    expect(bad.message).toBe(OPT_OUT_MESSAGES.invalidPhoneNumbers(['123', 'abc']));
    expect(bad.message.startsWith('Invalid phone numbers: 123, abc')).toBe(true);
    expect((await refusal(service.add({ userId, phoneNumbers: [] }))).message).toBe('Please add phone numbers first');
    expect((await refusal(service.add({ userId, phoneNumbers: '91234567' }))).message).toBe(
      OPT_OUT_MESSAGES.phoneNumbersNotAList,
    );
    const many = Array.from({ length: OPT_OUT_LIMITS.addMax + 1 }, (_, i) => String(90_000_000 + i));
    expect((await refusal(service.add({ userId, phoneNumbers: many }))).message).toBe(
      OPT_OUT_MESSAGES.tooManyPhoneNumbers,
    );

    expect(await service.remove({ userId, phone: '85291234567' })).toEqual({ removed: true });
    const gone = await refusal(service.remove({ userId, phone: '91234567' }));
    expect([gone.kind, gone.message]).toEqual([ErrorKind.NotFound, OPT_OUT_MESSAGES.notListed]);
    expect((await refusal(service.remove({ userId, phone: '12' }))).kind).toBe(ErrorKind.Validation);
    // Another user cannot remove this user's entry: it is simply not on their list.
    expect((await refusal(service.remove({ userId: `${userId}-other`, phone: '61234567' }))).kind).toBe(
      ErrorKind.NotFound,
    );
    expect((await service.list({ userId })).total).toBe(2);
  });

  it('keyword settings: defaults, user-edited keywords take effect, empty or oversized lists refused clearly', async () => {
    expect(await service.getSettings({ userId })).toEqual(DEFAULT_OPT_OUT_SETTINGS);
    const saved = await service.setSettings({ userId, settings: { keywords: [' Halt ', 'halt', 'END'] } });
    expect(saved).toEqual({ ...DEFAULT_OPT_OUT_SETTINGS, keywords: ['halt', 'END'] });
    expect(await service.handleInbound(inbound('STOP'))).toBe('not_a_keyword');
    expect(await service.handleInbound(inbound('HALT'))).toBe('opted_out');

    const turnedOn = await service.setSettings({
      userId,
      settings: { confirmationEnabled: true, confirmationText: 'Bye' },
    });
    expect(turnedOn).toEqual({ keywords: ['halt', 'END'], confirmationEnabled: true, confirmationText: 'Bye' });
    await service.setSettings({ userId, settings: { confirmationEnabled: false } });

    const msg = async (settings: unknown) => (await refusal(service.setSettings({ userId, settings }))).message;
    expect(await msg({ keywords: [] })).toBe(OPT_OUT_MESSAGES.keywordsEmpty);
    expect(await msg({ keywords: ['  '] })).toBe(OPT_OUT_MESSAGES.keywordBlank);
    expect(await msg({ keywords: Array.from({ length: OPT_OUT_LIMITS.keywordsMax + 1 }, (_, i) => `K${i}`) })).toBe(
      OPT_OUT_MESSAGES.keywordsTooMany,
    );
    expect(await msg({ keywords: ['X'.repeat(OPT_OUT_LIMITS.keywordMaxLength + 1)] })).toBe(
      OPT_OUT_MESSAGES.keywordTooLong,
    );
    expect(await msg({ keywords: 'STOP' })).toBe(OPT_OUT_MESSAGES.keywordsNotAList);
    expect(await msg({ confirmationText: '' })).toBe(OPT_OUT_MESSAGES.confirmationTextRequired);
    expect(await msg({ confirmationText: 'x'.repeat(OPT_OUT_LIMITS.confirmationTextMax + 1) })).toBe(
      OPT_OUT_MESSAGES.confirmationTextTooLong,
    );
    expect(await msg({ confirmationEnabled: 'yes' })).toBe(OPT_OUT_MESSAGES.confirmationEnabledNotBoolean);
    expect(await msg(null)).toBe(OPT_OUT_MESSAGES.settingsNotAnObject);
    // Nothing refused was stored.
    expect((await service.getSettings({ userId })).keywords).toEqual(['halt', 'END']);
  });

  it('suppression: opted out beats not on WhatsApp; the not-on-WhatsApp memory lasts the window, and an inbound message clears it', async () => {
    const em = ds.manager;
    await repo.add(em, userId, ['91111111'], 'manual');
    await steps.rememberNotOnWhatsApp(em, userId, '91111111');
    await steps.rememberNotOnWhatsApp(em, userId, '92222222');
    await steps.rememberNotOnWhatsApp(em, userId, '93333333');
    await rows(
      em,
      `UPDATE not_on_whatsapp SET at = now() - interval '31 days' WHERE user_id = $1 AND phone = '93333333'`,
      [userId],
    );

    const found = await steps.suppressedAmong(em, userId, ['91111111', '92222222', '93333333', '94444444'], DAYS);
    expect(Object.fromEntries(found)).toEqual({ '91111111': 'opted_out', '92222222': 'not_on_whatsapp' });
    expect(await service.check({ userId, phoneNumbers: ['92222222', '91111111', '94444444'] })).toEqual({
      optedOut: ['91111111'],
      notOnWhatsApp: ['92222222'],
    });
    expect((await steps.suppressedAmong(em, `${userId}-other`, ['91111111', '92222222'], DAYS)).size).toBe(0);

    await service.handleInbound(inbound('hello', '92222222'));
    expect((await steps.suppressedAmong(em, userId, ['92222222'], DAYS)).size).toBe(0);
  });

  it('lane step: a STOP mid-job moves that pending recipient to the skips; the take passes over it; one in flight is left alone', async () => {
    const em = ds.manager;
    const jobId = mintJobId((await app.get(JobIdSchemeRepository).read(em)).key, userId);
    await rows(
      em,
      `INSERT INTO jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, $2, 'hi', 5, 0, 0, 'running')`,
      [jobId, userId],
    );
    // In flight: 91000002 as a replica of the earlier version marked it, 91000005 as this one does.
    await rows(
      em,
      `INSERT INTO job_recipients (job_id, seq, phone, state, in_flight) VALUES ($1, 1, '91000001', 'sent', false), ($1, 2, '91000002', 'sending', false),
              ($1, 3, '91000003', 'pending', false), ($1, 4, '91000004', 'pending', false), ($1, 5, '91000005', 'pending', true)`,
      [jobId],
    );
    await rows(em, `UPDATE job_recipients SET variables = '{"name":"Dee"}' WHERE job_id = $1 AND seq = 4`, [jobId]);
    await repo.add(em, userId, ['91000002', '91000004', '91000005'], 'keyword');

    const moved = await ds.transaction((tx) => steps.skipSuppressedRecipients(tx, userId, jobId, DAYS));
    expect(moved).toEqual([{ phone: '91000004', reason: 'opted_out' }]);
    // The skipped row keeps its variables, for the report and the export.
    expect(await rows(em, `SELECT phone, variables FROM job_skips WHERE job_id = $1`, [jobId])).toEqual([
      { phone: '91000004', variables: { name: 'Dee' } },
    ]);
    expect(await ds.transaction((tx) => steps.skipSuppressedRecipients(tx, userId, jobId, DAYS))).toEqual([]);
    expect(skippedOf(await app.get(JobsRepository).statusOf(em, userId, jobId, 10))).toEqual([
      { phoneNumber: '91000004', reason: 'opted_out', timestamp: expect.stringMatching(ISO_MS) },
    ]);
    // Those left in flight by a dead worker may already be out: they are not held back.
    expect(
      await rows(
        em,
        `SELECT phone, state, in_flight FROM job_recipients WHERE job_id = $1 AND phone IN ('91000002', '91000005') ORDER BY phone`,
        [jobId],
      ),
    ).toEqual([
      { phone: '91000002', state: 'sending', in_flight: false },
      { phone: '91000005', state: 'pending', in_flight: true },
    ]);
  });

  it('skips recorded at the start keep their variables', async () => {
    const em = ds.manager;
    const jobId = mintJobId((await app.get(JobIdSchemeRepository).read(em)).key, userId);
    await rows(
      em,
      `INSERT INTO jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, $2, 'hi', 2, 0, 0, 'running')`,
      [jobId, userId],
    );
    const skips = new Map([
      ['91000011', 'opted_out' as const],
      ['91000012', 'not_on_whatsapp' as const],
    ]);
    expect(await repo.recordSkips(em, jobId, skips, new Map([['91000011', { name: 'Eve', order: '12' }]]))).toBe(2);
    expect(
      await rows(em, `SELECT phone, reason, variables FROM job_skips WHERE job_id = $1 ORDER BY phone`, [jobId]),
    ).toEqual([
      { phone: '91000011', reason: 'opted_out', variables: { name: 'Eve', order: '12' } },
      { phone: '91000012', reason: 'not_on_whatsapp', variables: null },
    ]);
  });

  describe('through the lane queue', () => {
    let queue: LaneQueue;
    const planned = (step: NextStep): PlannedSend => {
      if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
      return step.send;
    };
    const sent = () => ({ kind: 'sent' as const, at: new Date(), duplicate: false, messageId: `m-${randomUUID()}` });
    const jobOf = async (jobId: string) => (await app.get(JobsRepository).get(ds.manager, jobId))!;
    const logsOf = async (jobId: string) =>
      (await app.get(JobLogsRepository).page(ds.manager, jobId, new Date(0), 100)).map((l) => l.message);

    beforeAll(() => {
      queue = app.get(LaneQueue);
    });

    async function hold(worker: string): Promise<void> {
      await queue.heartbeat(worker);
      expect(await queue.claim(worker, 10, 0, userId)).toHaveLength(1);
    }

    it('a STOP recorded between two sends: the next step skips that recipient in its own transaction, logs it, and the job completes counting it', async () => {
      const jobId = await app.seedJob(userId, ['91200001', '91200002', '91200003']);
      await hold('w-opt');
      const first = planned(await queue.next('w-opt', userId));
      expect(first.phone).toBe('91200001');
      await service.handleInbound(inbound('STOP', '85291200002'));
      expect((await queue.finish('w-opt', first, sent())).kind).toBe('wait');

      const step = await queue.next('w-opt', userId);
      expect(planned(step).phone).toBe('91200003');
      expect(step.skipped).toEqual(['opted_out']);
      expect((await queue.finish('w-opt', planned(step), sent())).kind).toBe('wait');
      const job = await jobOf(jobId);
      expect([job.status, job.sent, job.failed, job.skipped, job.total]).toEqual(['completed', 2, 0, 1, 3]);
      expect(await logsOf(jobId)).toContain(OPT_OUT_MESSAGES.skippedMidJob('91200002', 'opted_out'));
      expect(skippedOf(await app.get(JobsRepository).statusOf(ds.manager, userId, jobId, 10))).toEqual([
        { phoneNumber: '91200002', reason: 'opted_out', timestamp: expect.stringMatching(ISO_MS) },
      ]);
    });

    it('the last recipient opts out: nothing is taken and the job completes with sent + failed + skipped = total', async () => {
      const jobId = await app.seedJob(userId, ['91210001', '91210002']);
      await hold('w-last');
      const first = planned(await queue.next('w-last', userId));
      await repo.add(ds.manager, userId, ['91210002'], 'manual');
      await queue.finish('w-last', first, sent());
      const step = await queue.next('w-last', userId);
      expect(step.kind).toBe('wait');
      expect(step.skipped).toEqual(['opted_out']);
      const job = await jobOf(jobId);
      expect([job.status, job.sent, job.failed, job.skipped]).toEqual(['completed', 1, 0, 1]);
    });

    it('WhatsApp does not know a number: the failure is remembered and later jobs skip it', async () => {
      await app.seedJob(userId, ['91220001']);
      await hold('w-nowa');
      const send = planned(await queue.next('w-nowa', userId));
      await queue.finish('w-nowa', send, {
        kind: 'permanent',
        error: 'not on WhatsApp',
        code: SessionsErrorCode.NotOnWhatsApp,
      });
      expect(Object.fromEntries(await steps.suppressedAmong(ds.manager, userId, ['91220001'], DAYS))).toEqual({
        '91220001': 'not_on_whatsapp',
      });
      // Any other permanent refusal says nothing about the number.
      await app.seedJob(userId, ['91220002']);
      const other = planned(await queue.next('w-nowa', userId));
      await queue.finish('w-nowa', other, { kind: 'permanent', error: 'refused', code: 'SOMETHING_ELSE' });
      expect((await steps.suppressedAmong(ds.manager, userId, ['91220002'], DAYS)).size).toBe(0);
    });
  });
});
