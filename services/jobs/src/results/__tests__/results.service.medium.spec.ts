import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RESULTS_LIMITS, RESULTS_MESSAGES, type JobResultsPage } from '@bns/contracts';
import { AppError, NATS_CONNECTION } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { ResultsRepository } from '../results.repository.js';
import { ResultsService } from '../results.service.js';

const phones = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));
const bytesOf = (page: JobResultsPage) => Buffer.byteLength(JSON.stringify(page.results));

/**
 * The report's pages in-process on a real Postgres (no NATS: paging never touches it). Rows as big as
 * a job stored before the variables' size rules could hold must still page within one NATS message.
 */
describe('ResultsService.page (in-process, real Postgres)', () => {
  let ip: InProcess;
  let service: ResultsService;

  beforeAll(async () => {
    ip = await startInProcess({}, [ResultsRepository, ResultsService, { provide: NATS_CONNECTION, useValue: {} }]);
    service = ip.get(ResultsService);
  }, 60_000);
  afterAll(() => ip?.close());

  /** A job whose recipients carry these variables, stored as an older start stored them (no size rules). */
  async function jobWith(
    userId: string,
    list: string[],
    variables: (i: number) => Record<string, string>,
  ): Promise<string> {
    const jobId = await ip.seedJob(userId, list);
    await ip.seedVariables(
      jobId,
      list.map((_, i) => variables(i)),
    );
    return jobId;
  }

  it(`stops a page at ${RESULTS_LIMITS.pageBytesMax / 1024} KiB and goes on from there: 60 rows of 20,000 characters each`, async () => {
    const list = phones(60, 52_000_000);
    const jobId = await jobWith('user-big', list, (i) => ({ notes: `${i}:`.padEnd(20_000, 'x') }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await service.page({ userId: 'user-big', jobId, ...(cursor ? { cursor } : {}) });
      pages += 1;
      expect(page.results.length).toBeGreaterThan(0);
      expect(bytesOf(page)).toBeLessThanOrEqual(RESULTS_LIMITS.pageBytesMax);
      seen.push(...page.results.map((r) => r.phoneNumber));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    // 26 rows of about 20 KB fit in 512 KiB: three pages where the default limit (100) would make one of 1.2 MB.
    expect(pages).toBe(3);
    expect(seen).toEqual(list);
  }, 60_000);

  it('gives a row bigger than the bound a page of its own rather than none', async () => {
    const list = phones(3, 53_000_000);
    const jobId = await jobWith('user-huge', list, (i) =>
      i === 1 ? { a: 'y'.repeat(300_000), b: 'z'.repeat(300_000) } : { a: 'small' },
    );
    const first = await service.page({ userId: 'user-huge', jobId });
    expect(first.results.map((r) => r.phoneNumber)).toEqual([list[0]]);
    const second = await service.page({ userId: 'user-huge', jobId, cursor: first.nextCursor! });
    expect(second.results.map((r) => r.phoneNumber)).toEqual([list[1]]);
    expect(second.results[0]!.variables!.a).toHaveLength(300_000);
    const third = await service.page({ userId: 'user-huge', jobId, cursor: second.nextCursor! });
    expect(third).toMatchObject({ results: [{ phoneNumber: list[2], variables: { a: 'small' } }], nextCursor: null });
  }, 60_000);

  it('small rows still page by limit alone', async () => {
    const list = phones(5, 54_000_000);
    const jobId = await jobWith('user-small', list, (i) => ({ name: `N${i}` }));
    const page = await service.page({ userId: 'user-small', jobId, limit: '2' });
    expect(page.results.map((r) => r.phoneNumber)).toEqual(list.slice(0, 2));
    expect(page.nextCursor).toBe('2');
    expect(await service.page({ userId: 'user-small', jobId, cursor: '4', limit: '2' })).toMatchObject({
      results: [{ phoneNumber: list[4] }],
      nextCursor: null,
    });
  }, 60_000);

  it('searches the report by number: 8 digits, 852-prefixed and spaced forms find the same row, paged', async () => {
    const list = ['61000001', '61000002', '91000002', '61000003'];
    const jobId = await ip.seedJob('user-search', list);
    await ip.db.query(
      `INSERT INTO jobs.job_skips (job_id, phone, reason, at) VALUES ($1, '51000002', 'opted_out', now())`,
      [jobId],
    );
    const numbersOf = async (q: string, extra: Record<string, string> = {}) =>
      (await service.page({ userId: 'user-search', jobId, q, ...extra })).results.map((r) => r.phoneNumber);
    for (const q of ['61000002', '85261000002', '+852 6100 0002', '852-6100-0002'])
      expect(await numbersOf(q)).toEqual(['61000002']);
    // Part of a number finds every row holding it, the skipped ones too, in report order; one page at a time.
    expect(await numbersOf('000002')).toEqual(['61000002', '91000002', '51000002']);
    const first = await service.page({ userId: 'user-search', jobId, q: '000002', limit: '2' });
    expect(first.results.map((r) => r.phoneNumber)).toEqual(['61000002', '91000002']);
    const second = await service.page({
      userId: 'user-search',
      jobId,
      q: '000002',
      limit: '2',
      cursor: first.nextCursor!,
    });
    expect(second).toMatchObject({ results: [{ phoneNumber: '51000002' }], nextCursor: null });
    // With a status filter, both apply; an empty search is no search.
    expect(await numbersOf('000002', { status: 'skipped' })).toEqual(['51000002']);
    expect(await numbersOf('')).toEqual([...list, '51000002']);
    expect(await numbersOf('99999999')).toEqual([]);
    for (const q of ['abc', '6100 000x', '1'.repeat(RESULTS_LIMITS.searchMaxDigits + 1)]) {
      const err = await service.page({ userId: 'user-search', jobId, q }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).message).toBe(RESULTS_MESSAGES.invalidReportSearch);
    }
  }, 60_000);
});
