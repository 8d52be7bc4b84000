import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mintJobId, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { OptOutsRepository } from '../../optouts/opt-outs.repository.js';
import { Policies } from '../../policy/policy.service.js';
import { LaneStepRepository } from '../../queue/lane-step.repository.js';
import { LaneRepository } from '../../queue/lane.repository.js';
import { JobIdSchemeRepository } from '../../store/job-id-scheme.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { COPY_RECIPIENTS_FROM } from '../../store/recipients.repository.js';
import { AdmissionRepository, type AdmissionClaim } from '../admission.repository.js';

const phones = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));
const DAYS = 30;

/** The admission repository in-process on a real Postgres: idempotency keys and what a start reads in one statement. */
describe('AdmissionRepository (in-process, real Postgres)', () => {
  let ip: InProcess;
  let starts: AdmissionRepository;
  let tx: Transactions;

  beforeAll(async () => {
    ip = await startInProcess();
    starts = ip.get(AdmissionRepository);
    tx = ip.get(Transactions);
  }, 60_000);
  afterAll(() => ip?.close());

  const claim = (userId: string, key: string | null, hash: string | null, jobId: string, list: string[] = []) =>
    ({
      userId,
      key,
      requestHash: hash,
      jobId,
      phones: list,
      notOnWhatsAppDays: DAYS,
    }) satisfies AdmissionClaim;

  it('an idempotency key is claimed once per user, and in-flight work is counted for the caps', async () => {
    const jobId = await ip.seedJob('user-e', phones(10, 52_000_000));
    const key = randomUUID();
    const first = await tx.run((em) => starts.admit(em, claim('user-e', key, 'h1', jobId)));
    expect(first).toMatchObject({ claimed: true, inFlight: { jobs: 1, recipients: 10 }, ahead: 1 });
    expect((await tx.run((em) => starts.admit(em, claim('user-e', key, 'h2', jobId)))).claimed).toBe(false);
    // The same key of another user is another key; a start without a key claims nothing and always passes.
    const other = await ip.seedJob('user-f', ['61234567']);
    expect((await tx.run((em) => starts.admit(em, claim('user-f', key, 'h1', other)))).claimed).toBe(true);
    expect((await tx.run((em) => starts.admit(em, claim('user-f', null, null, other)))).claimed).toBe(true);
    expect(await starts.findStart(tx.manager, 'user-e', key)).toMatchObject({
      id: jobId,
      requestHash: 'h1',
      total: 10,
    });
    expect(await starts.findStart(tx.manager, 'user-f', key)).toMatchObject({ id: other, requestHash: 'h1' });
  });

  it('a claim rolled back with its start leaves the key free', async () => {
    const jobId = await ip.seedJob('user-g', ['61234568']);
    const key = randomUUID();
    await expect(
      tx.run(async (em) => {
        expect((await starts.admit(em, claim('user-g', key, 'h1', jobId))).claimed).toBe(true);
        throw new Error('refused after the claim');
      }),
    ).rejects.toThrow('refused after the claim');
    expect(await starts.findStart(tx.manager, 'user-g', key)).toBeUndefined();
    expect((await tx.run((em) => starts.admit(em, claim('user-g', key, 'h1', jobId)))).claimed).toBe(true);
  });

  it('reads the stored policy, the lane counters and who is suppressed, each only for its own user', async () => {
    const user = 'user-h';
    const em = ip.db.manager;
    // Nothing stored yet: no policy, no lane, nobody suppressed.
    const bare = await starts.admit(em, claim(user, null, null, randomUUID(), ['91000001', '91000002']));
    expect(bare).toMatchObject({
      policy: undefined,
      counters: undefined,
      ahead: 0,
      inFlight: { jobs: 0, recipients: 0 },
    });
    expect(bare.suppressed.size).toBe(0);

    const policies = ip.get(Policies);
    const saved = await policies.update(em, user, { delayMs: 9000, dailyCap: 40 });
    await ip.get(OptOutsRepository).add(em, user, ['91000001'], 'manual');
    await ip.get(LaneStepRepository).rememberNotOnWhatsApp(em, user, '91000002');
    await ip.get(LaneStepRepository).rememberNotOnWhatsApp(em, user, '91000001');
    await tx.run((e) => ip.get(LaneRepository).activate(e, user));
    await ip.get(LaneRepository).setCounters(em, user, { dayKey: '2026-12-03', dayCount: 7 });

    const read = await starts.admit(em, claim(user, null, null, randomUUID(), ['91000001', '91000002', '91000003']));
    expect(read.policy).toEqual(saved);
    expect(read.counters).toEqual(await ip.get(LaneRepository).counters(em, user));
    expect(read.counters).toMatchObject({ dayKey: '2026-12-03', dayCount: 7 });
    // Opted out wins over not on WhatsApp; the same lists suppress nobody for another user.
    expect(Object.fromEntries(read.suppressed)).toEqual({ '91000001': 'opted_out', '91000002': 'not_on_whatsapp' });
    const stranger = await starts.admit(em, claim('user-i', null, null, randomUUID(), ['91000001', '91000002']));
    expect(stranger).toMatchObject({ policy: undefined, counters: undefined });
    expect(stranger.suppressed.size).toBe(0);
  });

  it("stores a start's job and its recipients in one statement, texts in list order, defaults for the rest", async () => {
    const jobs = ip.get(JobsRepository);
    const { key } = await ip.get(JobIdSchemeRepository).read(ip.db.manager);
    const plain = mintJobId(key, 'user-j');
    const personal = mintJobId(key, 'user-j');
    const finishAt = new Date('2026-12-03T10:00:00.000Z');
    const job = (id: string, total: number) => ({
      id,
      userId: 'user-j',
      clientId: null,
      message: 'Hi {name}',
      total,
      delayMs: 4000,
      estimatedMinutes: 2,
      status: 'queued' as const,
      startAt: null,
      estimatedFinishAt: finishAt,
    });
    await tx.run((em) => jobs.insertWithRecipients(em, job(plain, 2), ['91000001', '91000002'], []));
    await tx.run((em) =>
      jobs.insertWithRecipients(
        em,
        { ...job(personal, 3), skipped: 1, transactional: false },
        ['91000003', '91000004', '91000005'],
        ['Hi Ann', 'Hi "Bo"\n', 'Hi Çé 👋'],
      ),
    );
    const stored = await ip.db.query(
      `SELECT id, total, sent, skipped, transactional, delay_ms, estimated_finish_at, status FROM jobs.jobs WHERE id = ANY($1::uuid[]) ORDER BY total`,
      [[plain, personal]],
    );
    expect(stored).toEqual([
      {
        id: plain,
        total: 2,
        sent: 0,
        skipped: 0,
        transactional: false,
        delay_ms: 4000,
        estimated_finish_at: finishAt,
        status: 'queued',
      },
      {
        id: personal,
        total: 3,
        sent: 0,
        skipped: 1,
        transactional: false,
        delay_ms: 4000,
        estimated_finish_at: finishAt,
        status: 'queued',
      },
    ]);
    const recipients = await ip.db.query(
      `SELECT job_id, seq, phone, text, state FROM jobs.job_recipients WHERE job_id = ANY($1::uuid[]) ORDER BY job_id = $2 DESC, seq`,
      [[plain, personal], plain],
    );
    expect(
      recipients.map((r: { seq: number; phone: string; text: string | null }) => [r.seq, r.phone, r.text]),
    ).toEqual([
      [1, '91000001', null],
      [2, '91000002', null],
      [1, '91000003', 'Hi Ann'],
      [2, '91000004', 'Hi "Bo"\n'],
      [3, '91000005', 'Hi Çé 👋'],
    ]);
    expect(new Set(recipients.map((r: { state: string }) => r.state))).toEqual(new Set(['pending']));
  });
  it('stores a large start with COPY exactly as the one statement stores a small one: texts, variables, order', async () => {
    const jobs = ip.get(JobsRepository);
    const { key } = await ip.get(JobIdSchemeRepository).read(ip.db.manager);
    // Text COPY must escape, and text the INSERT path takes as it is.
    const awkward = ['tab\there', 'new\nline', 'cr\rret', 'back\\slash', '\\N', 'quote "\'', 'Çé 👋 中', ' ', '\\.'];
    const sizes = [3, COPY_RECIPIENTS_FROM, COPY_RECIPIENTS_FROM + 7];
    const stored: unknown[][] = [];
    for (const n of sizes) {
      const id = mintJobId(key, 'user-k');
      const list = phones(n, 93_000_000);
      const texts = list.map((_, i) => `Hi ${awkward[i % awkward.length]} #${i}`);
      const variables = list.map((_, i) =>
        i % 4 === 3 ? null : { name: awkward[i % awkward.length]!, __proto__: `p${i}`, 'tab\tname': '1' },
      );
      const jobsBefore = await ip.db.query(`SELECT count(*)::int AS n FROM jobs.jobs WHERE id = $1`, [id]);
      expect(jobsBefore[0].n).toBe(0);
      await tx.run((em) =>
        jobs.insertWithRecipients(
          em,
          {
            id,
            userId: 'user-k',
            clientId: null,
            message: 'Hi {{name}}',
            total: n,
            delayMs: 4000,
            estimatedMinutes: 1,
            status: 'queued',
            startAt: null,
            estimatedFinishAt: new Date(),
            personalised: true,
          },
          list,
          texts,
          variables,
        ),
      );
      const found: { seq: number; phone: string; text: string; variables: unknown; state: string }[] =
        await ip.db.query(
          `SELECT seq, phone, text, variables, state FROM jobs.job_recipients WHERE job_id = $1 ORDER BY seq`,
          [id],
        );
      expect(found).toHaveLength(n);
      found.forEach((r, i) => {
        expect(r).toEqual({
          seq: i + 1,
          phone: list[i],
          text: texts[i],
          variables: variables[i] ? { ...variables[i] } : null,
          state: 'pending',
        });
      });
      const job = await ip.db.query(`SELECT total, personalised, status FROM jobs.jobs WHERE id = $1`, [id]);
      expect(job).toEqual([{ total: n, personalised: true, status: 'queued' }]);
      stored.push(found.slice(0, 3).map((r) => [r.text, r.variables]));
    }
    // The first rows of each size read back the same, whichever way they were written.
    expect(stored[1]).toEqual(stored[0]);
    expect(stored[2]).toEqual(stored[0]);
  });

  it('a large start that fails part-way stores nothing: no job, no recipients', async () => {
    const jobs = ip.get(JobsRepository);
    const { key } = await ip.get(JobIdSchemeRepository).read(ip.db.manager);
    const id = mintJobId(key, 'user-l');
    const list = phones(COPY_RECIPIENTS_FROM + 1, 94_000_000);
    // The same number twice breaks the (job, phone) key at the last row: the whole start rolls back.
    list[list.length - 1] = list[0]!;
    await expect(
      tx.run((em) =>
        jobs.insertWithRecipients(
          em,
          {
            id,
            userId: 'user-l',
            clientId: null,
            message: 'Hi',
            total: list.length,
            delayMs: 4000,
            estimatedMinutes: 1,
            status: 'queued',
            startAt: null,
            estimatedFinishAt: new Date(),
          },
          list,
          [],
        ),
      ),
    ).rejects.toThrow(/duplicate key/);
    expect(await ip.db.query(`SELECT 1 FROM jobs.jobs WHERE id = $1`, [id])).toEqual([]);
    expect(await ip.db.query(`SELECT 1 FROM jobs.job_recipients WHERE job_id = $1`, [id])).toEqual([]);
    // The connection is usable afterwards.
    expect(await tx.run((em) => em.query(`SELECT 1 AS one`))).toEqual([{ one: 1 }]);
  });
});
