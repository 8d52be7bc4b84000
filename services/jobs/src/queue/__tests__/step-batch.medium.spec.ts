import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { plannedByIndex, rows, TransactionBatcher, Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { JobLogsRepository } from '../../events/job-logs.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { LaneQueue, type NextStep, type PlannedSend } from '../lane-queue.js';
import { LaneStepRepository, type SentRecord } from '../lane-step.repository.js';

/**
 * Lane steps of many accounts share one transaction (one commit for many is what lets one replica pace thousands). What must hold: one commit for many,
 * each step's result and events exactly as if it had run alone, and one step's failure never costs
 * another step its work.
 */
describe('batched lane steps against a real Postgres (in-process)', () => {
  let app: InProcess;
  let queue: LaneQueue;
  let users = 0;
  const user = () => `user_batch_${++users}`;

  beforeAll(async () => {
    app = await startInProcess({ SEND_DELAY_MS: '0', JOBS_STEP_BATCH: '64', JOBS_STEP_TRANSACTIONS: '1' });
    queue = app.get(LaneQueue);
    await app.db.query(`CREATE TABLE jobs.batch_probe (id int PRIMARY KEY, note text NOT NULL)`);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  const em = () => app.get(Transactions).manager;
  /**
   * What `work` returns, how many statements the service sent Postgres meanwhile (every client's), and how
   * many of them were COMMITs (pg_stat_database's count is flushed late, so it cannot tell this).
   */
  const statements = async <T>(work: () => Promise<T>): Promise<{ result: T; queries: number; commits: number }> => {
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    try {
      const result = await work();
      const texts = spy.mock.calls.map(([q]) =>
        String(typeof q === 'string' ? q : (q as { text?: string }).text)
          .trim()
          .toUpperCase(),
      );
      return { result, queries: texts.length, commits: texts.filter((t) => t === 'COMMIT').length };
    } finally {
      spy.mockRestore();
    }
  };
  const sent = (at = new Date()) => ({ kind: 'sent' as const, at, duplicate: false, messageId: 'm1' });
  const planned = (step: NextStep): PlannedSend => {
    if (step.kind !== 'send') throw new Error(`expected a send, got ${step.kind}`);
    return step.send;
  };

  it('runs work queued together in one transaction, and each settles with its own result', async () => {
    const sizes: Array<[number, boolean]> = [];
    const batcher = new TransactionBatcher(app.get(Transactions), {
      maxBatch: 50,
      maxInFlight: 1,
      onBatch: (n, alone) => sizes.push([n, alone]),
    });
    let ends = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        batcher.run(async (m, batch) => {
          batch.atEnd('count', async () => void ends++);
          await rows(m, `INSERT INTO jobs.batch_probe (id, note) VALUES ($1, $2)`, [i, `n${i}`]);
          return i * 10;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i * 10));
    expect(sizes).toEqual([[20, false]]);
    expect(ends).toBe(1);
    expect(Number((await app.db.query(`SELECT count(*) AS n FROM jobs.batch_probe`))[0].n)).toBe(20);
  });

  it('a unit that fails costs the others nothing: they run again alone and commit; the failing one rolls back alone', async () => {
    const sizes: Array<[number, boolean]> = [];
    const batcher = new TransactionBatcher(app.get(Transactions), {
      maxBatch: 50,
      maxInFlight: 1,
      onBatch: (n, alone) => sizes.push([n, alone]),
    });
    const settled = await Promise.allSettled(
      [100, 101, 102, 0 /* taken by the test above: a duplicate key */, 103].map((id) =>
        batcher.run(async (m) => {
          await rows(m, `INSERT INTO jobs.batch_probe (id, note) VALUES ($1, 'second')`, [id]);
          return id;
        }),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(sizes).toEqual([[5, true]]);
    const stored = await app.db.query(`SELECT id, note FROM jobs.batch_probe WHERE id = 0 OR id >= 100 ORDER BY id`);
    expect(stored).toEqual([
      { id: 0, note: 'n0' },
      { id: 100, note: 'second' },
      { id: 101, note: 'second' },
      { id: 102, note: 'second' },
      { id: 103, note: 'second' },
    ]);
  });

  it('gathers what side-by-side units ask alike into one statement; a bad key fails only its own unit once they run again alone', async () => {
    const sizes: Array<[number, boolean]> = [];
    const batcher = new TransactionBatcher(app.get(Transactions), {
      maxBatch: 50,
      maxInFlight: 1,
      onBatch: (n, alone) => sizes.push([n, alone]),
    });
    const rounds: number[][] = [];
    const insertMany = async (m: EntityManager, ids: number[]) => {
      rounds.push(ids);
      await rows(m, `INSERT INTO jobs.batch_probe (id, note) SELECT id, 'gathered' FROM unnest($1::int[]) AS t(id)`, [
        ids,
      ]);
      return ids.map((id) => id * 2);
    };
    const unit = (id: number) => batcher.run((_em, batch) => batch.gather('probe.insert', id, insertMany));

    const together = await statements(() => Promise.all([200, 201, 202, 203].map(unit)));
    expect(together.result).toEqual([400, 402, 404, 406]);
    expect(rounds).toEqual([[200, 201, 202, 203]]);
    // BEGIN, the one insert, COMMIT.
    expect(together.queries).toBe(3);

    // 201 is taken: the gathered insert fails, the batch rolls back, and each unit runs alone.
    rounds.length = 0;
    sizes.length = 0;
    const settled = await Promise.allSettled([210, 201, 211].map(unit));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(rounds[0]).toEqual([210, 201, 211]);
    expect(rounds.slice(1).sort()).toEqual([[201], [210], [211]]);
    expect(sizes).toEqual([[3, true]]);
    const stored = await app.db.query(`SELECT id FROM jobs.batch_probe WHERE note = 'gathered' ORDER BY id`);
    expect(stored.map((r: { id: number }) => r.id)).toEqual([200, 201, 202, 203, 210, 211]);
  });

  it('30 accounts due together: their steps take one commit, and each gets its own recipient, log lines and events', async () => {
    const accounts = Array.from({ length: 30 }, () => user());
    const jobIds = new Map<string, string>();
    for (const userId of accounts) jobIds.set(userId, await app.seedJob(userId, ['91234567', '61234567']));
    await queue.heartbeat('w-batch');
    await queue.claim('w-batch', 100, 60_000);

    const steps = await statements(() => Promise.all(accounts.map((userId) => queue.next('w-batch', userId))));
    // One for the batch (a second at most if the pool's timing splits it); not one per account. Counted
    // as the COMMITs sent: pg_stat_database's count is flushed late, so on a loaded machine it also held
    // the seeding's commits.
    expect(steps.commits).toBeGreaterThanOrEqual(1);
    expect(steps.commits).toBeLessThanOrEqual(2);
    // The steps' lane locks go as one statement, and so do their takes: a handful of round trips for
    // the batch (BEGIN, lock, take, log lines, outbox, COMMIT), not a few per account.
    expect(steps.queries).toBeLessThanOrEqual(2 * 8);

    steps.result.forEach((step, i) => {
      const send = planned(step);
      expect(send).toMatchObject({ userId: accounts[i], jobId: jobIds.get(accounts[i]!), seq: 1, phone: '91234567' });
      // Each step's events are its own account's, in the order it wrote them.
      expect(step.published.map((p) => p.subject)).toEqual(['events.job.log', 'events.job.progress']);
      expect(step.published.every((p) => (p.payload as { userId: string }).userId === accounts[i])).toBe(true);
      expect(step.published[0]!.payload).toMatchObject({ jobId: send.jobId, type: 'info' });
    });
    // The log lines the events point at are the ones stored for each job.
    for (const step of steps.result) {
      const send = planned(step);
      const lines = await app.get(JobLogsRepository).page(em(), send.jobId, new Date(0), 10);
      expect(lines.map((l) => l.message)).toEqual([(step.published[0]!.payload as { message: string }).message]);
      expect(lines[0]!.at.toISOString()).toBe((step.published[0]!.payload as { timestamp: string }).timestamp);
    }
    const ids = steps.result.map((s) =>
      BigInt((s.published[0]!.payload as { eventId: string }).eventId.replace('job-log:', '')),
    );
    expect(new Set(ids).size).toBe(30);

    // Finishing them all, each also takes its next message in the same transaction (delay 0).
    const finished = await statements(() =>
      Promise.all(steps.result.map((s) => queue.finish('w-batch', planned(s), sent(), { thenNext: true }))),
    );
    // Recording the 30 sends is one statement too, and so are the next steps' locks and takes.
    expect(finished.queries).toBeLessThanOrEqual(2 * 10);
    const done = finished.result;
    done.forEach((d, i) => {
      expect(d.kind).toBe('wait');
      expect(d.published.find((p) => p.subject === 'events.message.status')?.payload).toMatchObject({
        userId: accounts[i],
        recipient: '91234567',
        status: 'sent',
      });
      expect(d.next && planned(d.next)).toMatchObject({
        userId: accounts[i],
        seq: 2,
        phone: '61234567',
        resumed: false,
      });
    });
    const jobs = app.get(JobsRepository);
    for (const userId of accounts)
      expect(await jobs.get(em(), jobIds.get(userId)!)).toMatchObject({ status: 'running', sent: 1, failed: 0 });
  });

  it('steps that may wait for company (taken ahead of their slot) share one commit though they come milliseconds apart', async () => {
    const accounts = Array.from({ length: 8 }, () => user());
    for (const userId of accounts) await app.seedJob(userId, ['91234567']);
    await queue.heartbeat('w-gather');
    await queue.claim('w-gather', 100, 60_000);
    const { result: done, commits: commitsSent } = await statements(async () => {
      const steps: Promise<NextStep>[] = [];
      for (const userId of accounts) {
        steps.push(queue.next('w-gather', userId, { waitMs: 500 }));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return Promise.all(steps);
    });
    expect(done.map((s) => s.kind)).toEqual(accounts.map(() => 'send'));
    // Without waiting, the first would have gone alone at once and the rest after it: two at least.
    expect(commitsSent).toBe(1);
  });

  it("records a batch of sends in one statement: an outcome that no longer applies moves neither its job nor its lane's counters and slot, a lane held by another worker is not touched, and the rest apply", async () => {
    const accounts = [user(), user(), user(), user()];
    for (const u of accounts) await app.seedJob(u, ['91234567', '61234567']);
    await queue.heartbeat('w-rec');
    await queue.claim('w-rec', 100, 60_000);
    const sends = (await Promise.all(accounts.map((u) => queue.next('w-rec', u)))).map(planned);
    // The second's outcome was recorded meanwhile (by a worker that took its lane over): it is no longer in flight.
    await app.db.query(
      `UPDATE jobs.job_recipients SET in_flight = false, state = 'sent', done_at = now() WHERE job_id = $1 AND seq = $2`,
      [sends[1]!.jobId, sends[1]!.seq],
    );
    // The fourth's lane is another worker's now.
    await app.db.query(`UPDATE jobs.lanes SET holder = 'w-other' WHERE user_id = $1`, [accounts[3]]);
    const lanes = async () =>
      new Map(
        (
          await app.db.query(
            `SELECT user_id, day_count, run_count, next_send_at FROM jobs.lanes WHERE user_id = ANY($1)`,
            [accounts],
          )
        ).map((r: { user_id: string; day_count: number; run_count: number; next_send_at: Date }) => [r.user_id, r]),
      );
    const before = await lanes();
    const at = new Date();
    const floor = new Date(at.getTime() + 3_600_000);
    const records: SentRecord[] = sends.map((send) => ({
      send,
      at,
      pacedMs: 3_600_000,
      slot: { notBeforeMs: 0, floor },
      counters: { dayCount: 7, runCount: 3 },
      keepLane: false,
    }));
    const recorded = await app
      .get(Transactions)
      .run((m) => app.get(LaneStepRepository).recordSentMany(m, 'w-rec', records));

    expect(recorded.map((r) => r.job?.sent)).toEqual([1, undefined, 1, 1]);
    expect(recorded.map((r) => r.lane !== undefined)).toEqual([true, true, true, false]);
    const after = await lanes();
    for (const u of [accounts[0]!, accounts[2]!]) {
      expect(after.get(u)).toMatchObject({ day_count: 7, run_count: 3 });
      expect(after.get(u)!.next_send_at.getTime()).toBe(floor.getTime());
    }
    // Rescheduled as after nothing: its counters as they were, its slot not pushed to the floor.
    expect(after.get(accounts[1]!)).toMatchObject({
      day_count: before.get(accounts[1]!)!.day_count,
      run_count: before.get(accounts[1]!)!.run_count,
    });
    expect(after.get(accounts[1]!)!.next_send_at.getTime()).toBeLessThan(floor.getTime());
    expect(after.get(accounts[3]!)).toEqual(before.get(accounts[3]!));
    const jobs = app.get(JobsRepository);
    expect(await jobs.get(em(), sends[1]!.jobId)).toMatchObject({ sent: 0 });
  });

  it('a plain send leaves its lane as the take wrote it: the take counted it, the sent recipient sets the slot, and the next take books from there', async () => {
    const accounts = [user(), user(), user()];
    for (const u of accounts) await app.seedJob(u, ['91234567', '61234567', '51234567']);
    await queue.heartbeat('w-keep');
    await queue.claim('w-keep', 100, 60_000);
    const laneRow = async (u: string) =>
      (
        await app.db.query(
          `SELECT day_count, run_count, unanswered, next_send_at, updated_at, sending_job, sending_seq FROM jobs.lanes WHERE user_id = $1`,
          [u],
        )
      )[0] as {
        day_count: number;
        run_count: number;
        unanswered: Record<string, number>;
        next_send_at: Date;
        updated_at: Date;
        sending_job: string | null;
        sending_seq: number | null;
      };
    const sends = (await Promise.all(accounts.map((u) => queue.next('w-keep', u)))).map(planned);
    // The take counted the message: the day's count, the run, and a number that never replied.
    const taken = await laneRow(accounts[0]!);
    expect(taken).toMatchObject({ day_count: 1, run_count: 1, sending_job: sends[0]!.jobId, sending_seq: 1 });
    expect(Object.values(taken.unanswered)).toEqual([1]);
    expect(sends[0]!.counted).toMatchObject({ counters: { dayCount: 1, runCount: 1 }, unanswered: true });
    // The third's lane is another worker's now.
    await app.db.query(`UPDATE jobs.lanes SET holder = 'w-other' WHERE user_id = $1`, [accounts[2]]);

    const at = new Date();
    const paced = 3_600_000;
    const records: SentRecord[] = sends.map((send) => ({
      send,
      at,
      pacedMs: paced,
      slot: { notBeforeMs: 0, floor: new Date(at.getTime() + paced) },
      counters: { engineFailures: 0 },
      keepLane: true,
    }));
    const recorded = await app
      .get(Transactions)
      .run((m) => app.get(LaneStepRepository).recordSentMany(m, 'w-keep', records));
    expect(recorded.map((r) => r.job?.sent)).toEqual([1, 1, 1]);
    expect(recorded.map((r) => r.lane?.nextSendAt.getTime())).toEqual([
      at.getTime() + paced,
      at.getTime() + paced,
      undefined,
    ]);
    expect(recorded[0]!.lane!.waitMs).toBeGreaterThan(paced - 60_000);
    // Not written: the lane's row is the take's, still naming the recipient, now sent.
    expect(await laneRow(accounts[0]!)).toEqual(taken);
    // Its next step waits for the slot the sent recipient sets, and the job shows it.
    const next = await queue.next('w-keep', accounts[0]!);
    expect(next.kind).toBe('wait');
    expect(next.kind === 'wait' && next.waitMs).toBeGreaterThan(paced - 60_000);
    const job = await app.get(JobsRepository).findOwned(em(), accounts[0]!, sends[0]!.jobId);
    expect(job?.nextSendAt?.getTime()).toBe(at.getTime() + paced);
    // Taken once due, the next message books its slot a pace after that one and is counted in turn.
    await app.db.query(`UPDATE jobs.job_recipients SET done_at = done_at - interval '2 hours' WHERE job_id = $1`, [
      sends[0]!.jobId,
    ]);
    const second = planned(await queue.next('w-keep', accounts[0]!));
    expect(second.seq).toBe(2);
    expect(await laneRow(accounts[0]!)).toMatchObject({ day_count: 2, run_count: 2, sending_seq: 2 });
  });

  it('an outcome that sent nothing puts back what its take counted, and a recipient taken again after a crash is not counted twice', async () => {
    const u = user();
    const jobId = await app.seedJob(u, ['91234567', '61234567']);
    await queue.heartbeat('w-back');
    await queue.claim('w-back', 100, 60_000);
    const counters = async () =>
      (await app.db.query(`SELECT day_count, run_count, unanswered FROM jobs.lanes WHERE user_id = $1`, [u]))[0];
    const before = await counters();
    const first = planned(await queue.next('w-back', u));
    expect((await counters()).day_count).toBe(before.day_count + 1);
    // Its worker died: taken again, it is not counted again.
    const again = planned(await queue.next('w-back', u));
    expect(again).toMatchObject({ seq: first.seq, resumed: true, counted: undefined });
    expect((await counters()).day_count).toBe(before.day_count + 1);
    // The account was not linked: nothing went out, so the first take's count is put back.
    await queue.finish('w-back', { ...first }, { kind: 'unlinked', error: 'not linked' });
    expect(await counters()).toEqual(before);
    expect(await app.get(JobsRepository).get(em(), jobId)).toMatchObject({ sent: 0 });
  });

  it('a step transaction plans by index and runs its batched statements prepared: their generic plans look rows up by key on small tables, where without it they scan them', async () => {
    const accounts = Array.from({ length: 3 }, () => user());
    for (const u of accounts) await app.seedJob(u, ['91234567', '61234567']);
    await queue.heartbeat('w-plan');
    await queue.claim('w-plan', 100, 60_000);
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    let queries: Array<{ name?: string; text: string }>;
    try {
      const steps = await Promise.all(accounts.map((u) => queue.next('w-plan', u)));
      await Promise.all(steps.map((s) => queue.finish('w-plan', planned(s), sent(), { thenNext: true })));
      queries = spy.mock.calls.map(([q]) =>
        typeof q === 'string' ? { text: q } : (q as { name?: string; text: string }),
      );
    } finally {
      spy.mockRestore();
    }
    // Each transaction's first statement after BEGIN plans by index.
    const begins = queries.flatMap((q, i) =>
      /^START TRANSACTION/i.test(q.text.trim()) ? [queries[i + 1]!.text.trim()] : [],
    );
    expect(begins.length).toBeGreaterThan(0);
    expect(new Set(begins)).toEqual(new Set(['SET LOCAL enable_seqscan = off']));
    // The lock, take and record of the batch went as named (prepared) statements.
    const named = (pattern: RegExp) => queries.filter((q) => pattern.test(q.text));
    const record = named(/UPDATE job_recipients t SET state = 'sent'/);
    const take = named(/\), carried AS \(/);
    const lock = named(/FOR NO KEY UPDATE\) l/);
    for (const statement of [record, take, lock]) {
      expect(statement.length).toBeGreaterThan(0);
      expect(statement.every((q) => typeof q.name === 'string')).toBe(true);
    }
    // Their generic plans (made once per connection, whatever the tables' size then) on these small tables.
    const genericPlan = async (text: string, byIndex: boolean) => {
      const runner = app.get(DataSource).createQueryRunner();
      try {
        await runner.startTransaction();
        if (byIndex) await plannedByIndex(runner.manager);
        const plan = (await runner.query(`EXPLAIN (GENERIC_PLAN) ${text}`)) as Array<{ 'QUERY PLAN': string }>;
        await runner.rollbackTransaction();
        return plan.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await runner.release();
      }
    };
    const scans = /Seq Scan on (job_recipients|lanes|jobs)\b/;
    // Statistics taken while nearly every recipient waits (a big job just started): "sent" looks rare.
    await app.seedJob(
      user(),
      Array.from({ length: 2000 }, (_, i) => String(60_000_000 + i)),
    );
    await app.db.query(`ANALYZE jobs.job_recipients`);
    for (const text of [record[0]!.text, take[0]!.text, lock[0]!.text]) {
      const plan = await genericPlan(text, true);
      expect(plan).not.toMatch(scans);
      // The lane's slot reads the recipient it names by key, never a job's sent recipients by state.
      expect(plan).not.toMatch(/job_recipients_done_idx/);
    }
    // Without it, the record's generic plan scans whole tables on every batch.
    expect(await genericPlan(record[0]!.text, false)).toMatch(scans);
  });

  it("a take finds its job's first open recipient once, under the generic plan too: its cost does not grow with the job", async () => {
    const recipients = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));
    // The table's statistics as a deployment sending one-off notifications has them (a job is about one
    // row), taken before a campaign came: a plan that trusts them thinks scanning a job's rows is cheap.
    const notify = user();
    for (let i = 0; i < 300; i++) await app.seedJob(notify, [String(91_000_000 + i)]);
    await app.db.query('ANALYZE jobs.job_recipients');
    const small = user();
    const large = user();
    await app.seedJob(small, recipients(20, 92_000_000));
    await app.seedJob(large, recipients(2000, 93_000_000));
    await queue.heartbeat('w-take');
    await queue.claim('w-take', 100, 60_000);
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    let takes: Array<{ text: string; values: unknown[] }>;
    try {
      for (const u of [small, large]) planned(await queue.next('w-take', u));
      takes = spy.mock.calls
        .map(([q]) => q as { text?: string; values?: unknown[] })
        .filter((q) => /\), carried AS \(/.test(q.text ?? ''))
        .map((q) => ({ text: q.text!, values: q.values ?? [] }));
    } finally {
      spy.mockRestore();
    }
    expect(takes).toHaveLength(2);
    // Each take again under the plan a prepared statement settles on, rolled back: the buffers it read.
    const buffers = async ({ text, values }: { text: string; values: unknown[] }) => {
      const runner = app.get(DataSource).createQueryRunner();
      try {
        await runner.startTransaction();
        await plannedByIndex(runner.manager);
        await runner.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
        await runner.query(`PREPARE take_probe AS ${text}`);
        // EXECUTE takes no bind parameters: each value as a literal (arrays in Postgres's text form).
        const literal = (v: unknown): string => {
          const text = Array.isArray(v)
            ? `{${v.map((e) => `"${String(e).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`
            : String(v);
          return `'${text.replaceAll("'", "''")}'`;
        };
        const [{ 'QUERY PLAN': plan }] = (await runner.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE take_probe(${values.map(literal).join(', ')})`,
        )) as Array<{ 'QUERY PLAN': Array<{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }> }>;
        await runner.rollbackTransaction();
        await runner.query(`DEALLOCATE take_probe`); // a prepared statement outlives the transaction
        return plan[0]!.Plan['Shared Hit Blocks'] + plan[0]!.Plan['Shared Read Blocks'];
      } finally {
        await runner.release();
      }
    };
    const [fromSmall, fromLarge] = [await buffers(takes[0]!), await buffers(takes[1]!)];
    // Looked up by key, a few blocks per table; looked for again for every row of the 2,000-row job, about 6,000.
    expect(fromSmall).toBeLessThan(100);
    expect(fromLarge).toBeLessThan(100);
  });

  it("a lane that lost its holder mid-batch is only that lane's answer; the others go on", async () => {
    const [a, b, c] = [user(), user(), user()];
    for (const u of [a, b, c]) await app.seedJob(u, ['91234567']);
    await queue.heartbeat('w-x');
    await queue.claim('w-x', 100, 60_000);
    // Another worker holds b's lane now.
    await app.db.query(`UPDATE jobs.lanes SET holder = 'w-other' WHERE user_id = $1`, [b]);
    const steps = await Promise.all([a, b, c].map((u) => queue.next('w-x', u)));
    expect(steps.map((s) => s.kind)).toEqual(['send', 'lost', 'send']);
  });
});
