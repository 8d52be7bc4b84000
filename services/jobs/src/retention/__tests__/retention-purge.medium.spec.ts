import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { RetentionPage } from '@bns/contracts';
import { connectNats, RpcClient, Transactions, RETENTION_CLOCK } from '@bns/service-kit';
import { startNats, type Nats } from '@bns/testing';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { ResultsRepository } from '../../results/results.repository.js';
import { RetentionPurge } from '../retention-purge.service.js';
import { RetentionRepository } from '../retention.repository.js';

const DAY = 86_400_000;

/**
 * The campaigns' retention purge on a real Postgres, with each user's setting answered over real NATS
 * on the integrations subject (pages of two, so paging is exercised) and a clock the test sets: details
 * older than the user's period go, newer ones and the counts stay, "until I delete them" keeps all.
 */
describe('retention purge of campaign details', () => {
  let nats: Nats;
  let nc: NatsConnection;
  let responder: Subscription;
  let app: InProcess;
  const now = new Date('2026-09-01T12:00:00Z');
  // The integrations service's answer: u_month keeps 30 days, u_keep until deleted; u_default has no setting (365).
  const settings: RetentionPage['settings'] = [
    { userId: 'u_a_month', days: 30 },
    { userId: 'u_b_quarter', days: 90 },
    { userId: 'u_keep', days: null },
  ];
  let pagesAsked = 0;

  beforeAll(async () => {
    nats = await startNats();
    nc = await connectNats(nats.url, 'jobs-retention-spec');
    responder = nc.subscribe('integrations.account.retention.page', {
      callback: (_err, msg) => {
        pagesAsked += 1;
        const { id, data } = msg.json<{ id: string; data: { after?: string; limit: number } }>();
        const from = settings.filter((s) => data.after === undefined || s.userId > data.after).slice(0, 2);
        const page: RetentionPage = { settings: from, next: from.length === 2 ? from[1]!.userId : null };
        msg.respond(JSON.stringify({ id, response: page, isDisposed: true }));
      },
    });
    app = await startInProcess({}, [
      { provide: RpcClient, useValue: new RpcClient(nc, { shards: 1, timeoutMs: 2000 }) },
      { provide: RETENTION_CLOCK, useValue: { now: () => now } },
      RetentionRepository,
      RetentionPurge,
      ResultsRepository,
    ]);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    responder?.unsubscribe();
    await nc?.close();
    await nats?.stop();
  });

  /** A finished job `daysAgo` days before the clock, with 3 recipients (delivered, replied), their variables and a log line. */
  async function finishedJob(userId: string, daysAgo: number): Promise<string> {
    const jobId = await app.seedJob(userId, ['91000001', '91000002', '91000003'], `Hello from ${userId}`);
    await app.db.query(`UPDATE jobs.jobs SET status = 'completed', sent = 3, finished_at = $2 WHERE id = $1`, [
      jobId,
      new Date(now.getTime() - daysAgo * DAY),
    ]);
    await app.db.query(
      `UPDATE jobs.job_recipients SET delivered_at = $2, replied_at = $2, variables = '{"name":"Ann"}' WHERE job_id = $1`,
      [jobId, now],
    );
    await app.db.query(`INSERT INTO jobs.job_receipts (job_id, delivered) VALUES ($1, 3)`, [jobId]);
    await app.db.query(`INSERT INTO jobs.job_logs (job_id, type, message) VALUES ($1, 'success', 'Sent to 91000001')`, [
      jobId,
    ]);
    return jobId;
  }

  const count = async (table: string, jobId: string) =>
    Number((await app.db.query(`SELECT count(*) AS n FROM jobs.${table} WHERE job_id = $1`, [jobId]))[0].n);

  it("removes details past each user's period, keeps newer ones, the counts and the opt-outs", async () => {
    const jobs = {
      monthOld: await finishedJob('u_a_month', 31),
      monthNew: await finishedJob('u_a_month', 29),
      quarterOld: await finishedJob('u_b_quarter', 91),
      quarterNew: await finishedJob('u_b_quarter', 60),
      defaultOld: await finishedJob('u_default', 366),
      defaultNew: await finishedJob('u_default', 200),
      keepOld: await finishedJob('u_keep', 1000),
    };
    // Still sending: never purged, however old.
    const running = await app.seedJob('u_a_month', ['92000001']);
    await app.db.query(`UPDATE jobs.jobs SET created_at = $2 WHERE id = $1`, [
      running,
      new Date(now.getTime() - 400 * DAY),
    ]);
    await app.db.query(
      `INSERT INTO jobs.opt_outs (user_id, phone, reason, at) VALUES ('u_a_month', '91000001', 'manual', $1)`,
      [new Date(now.getTime() - 400 * DAY)],
    );

    const done = await app.get(RetentionPurge).run();
    expect(done.jobs).toBe(3);
    expect(pagesAsked).toBe(2);

    for (const id of [jobs.monthOld, jobs.quarterOld, jobs.defaultOld]) {
      for (const table of ['job_recipients', 'job_logs']) expect(await count(table, id)).toBe(0);
    }
    for (const id of [jobs.monthNew, jobs.quarterNew, jobs.defaultNew, jobs.keepOld]) {
      expect(await count('job_recipients', id)).toBe(3);
      const named = await app.db.query(
        `SELECT count(*) AS n FROM jobs.job_recipients WHERE job_id = $1 AND variables->>'name' = 'Ann'`,
        [id],
      );
      expect(Number(named[0].n)).toBe(3);
      expect(await count('job_logs', id)).toBe(1);
    }
    expect(await count('job_recipients', running)).toBe(1);

    // The campaign stays with its counts (the usage figures), without its text, saying why.
    const [purged] = await app.db.query(
      `SELECT j.message, j.total, j.sent, j.details_purged_after_days AS days, c.delivered
         FROM jobs.jobs j JOIN jobs.job_receipts c ON c.job_id = j.id WHERE j.id = $1`,
      [jobs.monthOld],
    );
    expect(purged).toEqual({ message: '', total: 3, sent: 3, days: 30, delivered: 3 });
    const history = await app.get(ResultsRepository).history(app.db.manager, 'u_a_month', 10, undefined, 100);
    expect(history.find((h) => h.id === jobs.monthOld)).toMatchObject({ detailsPurgedAfterDays: 30, sent: 3 });
    expect(history.find((h) => h.id === jobs.monthNew)).toMatchObject({ detailsPurgedAfterDays: null });
    expect((await app.db.query(`SELECT count(*)::int AS n FROM jobs.opt_outs WHERE user_id = 'u_a_month'`))[0].n).toBe(
      1,
    );

    // A second run finds nothing more to do.
    expect((await app.get(RetentionPurge).run()).jobs).toBe(0);
  });

  it('applies a changed setting at the next run', async () => {
    const kept = await finishedJob('u_keep', 40);
    settings[2] = { userId: 'u_keep', days: 30 };
    await app.get(RetentionPurge).run();
    expect(await count('job_recipients', kept)).toBe(0);
    const [row] = await app
      .get(Transactions)
      .manager.query(`SELECT details_purged_after_days AS days FROM jobs.jobs WHERE id = $1`, [kept]);
    expect(row.days).toBe(30);
  });
});
