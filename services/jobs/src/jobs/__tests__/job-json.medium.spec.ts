import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JOB_MESSAGES, JobAnswerSchema, type JobView } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { jobHeadOf, jobJsonOf } from '../job-view.js';
import { JobsRepository } from '../../store/jobs.repository.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The job-status answer's JSON is written by Postgres (the lists) and spliced with the head, never parsed on the way:
 * it must be the JSON that JSON.stringify writes of the same answer — the same fields in the same order,
 * compact, every text escaped — so clients and ETags see no difference. Checked on a real Postgres.
 */
describe('job-status answer as JSON text (in-process, real Postgres)', () => {
  let app: InProcess;

  beforeAll(async () => {
    app = await startInProcess({ SEND_DELAY_MS: '0' });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const answerOf = async (userId: string, jobId: string, listMax: number) => {
    const { resultsJson, ...summary } = (await app
      .get(JobsRepository)
      .statusOf(app.get(Transactions).manager, userId, jobId, listMax))!;
    return jobJsonOf(jobHeadOf(summary), resultsJson);
  };

  it('is the compact JSON of the whole answer, lists oldest first, texts escaped, a missing error the spec words', async () => {
    const userId = 'user_json';
    const jobId = await app.seedJob(userId, ['91000001', '91000002', '91000003', '91000004', '91000005']);
    const nasty = 'quote " backslash \\ newline \n tab \t control \u0001 emoji 😀 中文 </script>';
    const em = app.get(Transactions).manager;
    await rows(
      em,
      `UPDATE jobs.job_recipients SET state = CASE WHEN seq <= 2 THEN 'sent' ELSE 'failed' END,
              done_at = '2026-11-28T10:00:00.123Z'::timestamptz + make_interval(secs => seq),
              error = CASE seq WHEN 3 THEN $2 WHEN 4 THEN NULL END
        WHERE job_id = $1 AND seq <= 4`,
      [jobId, nasty],
    );
    await rows(
      em,
      `INSERT INTO jobs.job_skips (job_id, phone, reason, at) VALUES ($1, '91000005', 'opted_out', '2026-11-28T10:00:09.5Z')`,
      [jobId],
    );
    await rows(em, `UPDATE jobs.jobs SET sent = 2, failed = 2, skipped = 1, error = $2 WHERE id = $1`, [jobId, nasty]);

    const json = await answerOf(userId, jobId, 10);
    const job = JSON.parse(json) as JobView;
    expect(JSON.stringify(job)).toBe(json);
    expect(JobAnswerSchema.safeParse({ success: true, job }).success).toBe(true);
    expect(Object.keys(job)).toEqual([
      'jobId',
      'status',
      'progress',
      'results',
      'error',
      'estimatedTime',
      'nextSendAt',
      'createdAt',
      'startedAt',
      'finishedAt',
      'startAt',
      'pausedReason',
      'resumesAt',
      'estimatedFinishAt',
    ]);
    expect(Object.keys(job.results)).toEqual(['skippedList', 'successList', 'failedList']);
    expect(job).toMatchObject({ jobId, error: nasty, progress: { total: 5, sent: 2, failed: 2, skipped: 1 } });
    expect(job.results).toEqual({
      skippedList: [{ phoneNumber: '91000005', reason: 'opted_out', timestamp: '2026-11-28T10:00:09.500Z' }],
      successList: [
        { originalNumber: '91000001', timestamp: '2026-11-28T10:00:01.123Z' },
        { originalNumber: '91000002', timestamp: '2026-11-28T10:00:02.123Z' },
      ],
      failedList: [
        { phoneNumber: '91000003', timestamp: '2026-11-28T10:00:03.123Z', error: nasty },
        { phoneNumber: '91000004', timestamp: '2026-11-28T10:00:04.123Z', error: JOB_MESSAGES.sendFailed },
      ],
    });
    for (const entry of [...job.results.successList, ...job.results.failedList])
      expect(entry.timestamp).toMatch(ISO_MS);

    // Each list keeps its newest entries, oldest first.
    const newest = JSON.parse(await answerOf(userId, jobId, 1)) as JobView;
    expect(newest.results.successList.map((e) => e.originalNumber)).toEqual(['91000002']);
    expect(newest.results.failedList.map((e) => e.phoneNumber)).toEqual(['91000004']);
  });

  it('a job with nothing done yet: empty lists', async () => {
    const jobId = await app.seedJob('user_json_empty', ['91000001']);
    const job = JSON.parse(await answerOf('user_json_empty', jobId, 10)) as JobView;
    expect(job.results).toEqual({ skippedList: [], successList: [], failedList: [] });
    expect(JobAnswerSchema.safeParse({ success: true, job }).success).toBe(true);
  });
});
