import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JOB_MESSAGES } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobGone, JobLogsRepository } from '../job-logs.repository.js';

/**
 * Log lines carry no per-row foreign key: the statement that writes them locks each job once and
 * refuses lines whose job is gone, and a job's deletion takes its lines with it.
 */
describe("a job's log lines without a per-row foreign key (real Postgres, in-process)", () => {
  let app: InProcess;
  beforeAll(async () => {
    app = await startInProcess();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  const linesOf = async (jobId: string) =>
    (await app.db.query(`SELECT message FROM jobs.job_logs WHERE job_id = $1 ORDER BY id`, [jobId])).map(
      (r: { message: string }) => r.message,
    );
  const missingJob = '0190a8f0-1c2d-8e3f-9a4b-5c6d7e8f9a0b';

  it('has no foreign key on job_logs, and writes one line or many in the order given', async () => {
    const checks = await app.db.query(
      `SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND conrelid = 'jobs.job_logs'::regclass`,
    );
    expect(checks).toEqual([{ n: 0 }]);
    const a = await app.seedJob('user_lines_a', ['91234567']);
    const b = await app.seedJob('user_lines_b', ['91234567']);
    const logs = app.get(JobLogsRepository);
    const stamped = await app.get(Transactions).run(async (em) => [
      await logs.add(em, a, 'info', 'a1'),
      ...(await logs.addMany(em, [
        { jobId: b, type: 'info', message: 'b1' },
        { jobId: a, type: 'success', message: 'a2' },
        { jobId: b, type: 'warning', message: 'b2' },
      ])),
    ]);
    expect(stamped).toHaveLength(4);
    expect(await linesOf(a)).toEqual(['a1', 'a2']);
    expect(await linesOf(b)).toEqual(['b1', 'b2']);
  });

  it('refuses a line whose job is not there, alone or among others, and writes none of the transaction', async () => {
    const a = await app.seedJob('user_lines_c', ['91234567']);
    const logs = app.get(JobLogsRepository);
    const tx = app.get(Transactions);
    await expect(tx.run((em) => logs.add(em, missingJob, 'info', 'x'))).rejects.toBeInstanceOf(JobGone);
    await expect(
      tx.run(async (em) => {
        await logs.add(em, a, 'info', 'kept only if all commit');
        return logs.addMany(em, [
          { jobId: a, type: 'info', message: 'fine' },
          { jobId: missingJob, type: 'info', message: 'orphan' },
        ]);
      }),
    ).rejects.toBeInstanceOf(JobGone);
    expect(await linesOf(a)).toEqual([]);
    expect(await linesOf(missingJob)).toEqual([]);
  });

  it("a job's deletion waits for a writer of its lines, then takes them with it; a later line is refused", async () => {
    const jobId = await app.seedJob('user_lines_d', ['91234567']);
    const logs = app.get(JobLogsRepository);
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writer = app.get(Transactions).run(async (em) => {
      await logs.add(em, jobId, 'success', 'Message sent');
      wrote();
      await held;
    });
    await written;
    let deletedAt = 0;
    const deletion = app.db.query(`DELETE FROM jobs.jobs WHERE id = $1`, [jobId]).then(() => {
      deletedAt = Date.now();
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(deletedAt).toBe(0);
    const committedAt = Date.now();
    release();
    await writer;
    await deletion;
    expect(deletedAt).toBeGreaterThanOrEqual(committedAt);
    expect(await linesOf(jobId)).toEqual([]);
    await expect(app.get(Transactions).run((em) => logs.add(em, jobId, 'info', 'late'))).rejects.toBeInstanceOf(
      JobGone,
    );
    expect(await linesOf(jobId)).toEqual([]);
  });

  it("reads a sent recipient as its line, merged with the stored ones in time order, paged by 'since'", async () => {
    const jobId = await app.seedJob('user_lines_sent', ['91230001', '91230002', '91230003']);
    const logs = app.get(JobLogsRepository);
    const t0 = Date.parse('2026-12-06T01:00:00.000Z');
    const at = (ms: number) => new Date(t0 + ms);
    await app.get(Transactions).run(async (em) => {
      await logs.addMany(em, [
        { jobId, type: 'info', message: 'first', at: at(0) },
        { jobId, type: 'info', message: 'between', at: at(20) },
        { jobId, type: 'info', message: 'same time as the second send', at: at(30) },
      ]);
    });
    // Sent at 10 and 30 ms (a sent time may carry microseconds); the third is still pending: no line.
    await app.db.query(
      `UPDATE jobs.job_recipients SET state = 'sent', done_at = $2::timestamptz + (seq * interval '10 ms') + (seq * interval '1 microsecond')
        WHERE job_id = $1 AND seq IN (1, 3)`,
      [jobId, at(0)],
    );
    const page = async (since: Date, limit = 100) =>
      (await logs.page(app.db.manager, jobId, since, limit)).map((l) => [l.message, l.at.getTime() - t0]);
    expect(await page(new Date(0))).toEqual([
      ['first', 0],
      [JOB_MESSAGES.messageSent('91230001'), 10],
      ['between', 20],
      ['same time as the second send', 30],
      [JOB_MESSAGES.messageSent('91230003'), 30],
    ]);
    // `since` is the last time seen (milliseconds): a line at that time is not given again.
    expect(await page(at(10))).toEqual([
      ['between', 20],
      ['same time as the second send', 30],
      [JOB_MESSAGES.messageSent('91230003'), 30],
    ]);
    expect(await page(at(30))).toEqual([]);
    // A page holds at most `limit` lines, whatever their kind.
    expect(await page(new Date(0), 2)).toEqual([
      ['first', 0],
      [JOB_MESSAGES.messageSent('91230001'), 10],
    ]);
    // Nothing of the sends is stored.
    expect(await linesOf(jobId)).toEqual(['first', 'between', 'same time as the second send']);
  });
});
