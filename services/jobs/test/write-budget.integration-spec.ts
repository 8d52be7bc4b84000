import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startPostgres, startSystem, waitFor, type Postgres, type System } from '@bns/testing';
import { isFinished, numbers, signInLinked, startJob, waitForJob, type User } from './helpers.js';
import { perMessageByTable, receiptsFolded, rowsOf, settledWrites } from './write-counts.js';

/**
 * What a plain campaign costs Postgres per message, pinned: one account's job of 500 recipients at delay 0, from the
 * start call until every message is sent and its delivered and read receipts are folded into the report.
 * Counted in the real server (pg_stat_user_tables: rows inserted, updated and deleted; pg_stat_database:
 * commits; pg_stat_statements: statements, the foreign-key checks Postgres runs for us included), so a
 * change that adds a write per message fails here rather than in a benchmark nobody runs.
 * The budgets are what the pipeline achieves now, with a little room for timing (how many receipts a
 * batch gathers); lower them as the pipeline improves (docs/benchmarks.md has the figures).
 */
const RECIPIENTS = 500;
const BUDGET = {
  /**
   * Rows the jobs service writes per message (its schema's tables; measured 7.2; 8.2 while a send's
   * record rescheduled the lane, 9.2 while each send stored its "Message sent" line, 10.5 while the
   * take marked the recipient's row).
   */
  jobsRowWrites: 8,
  /**
   * Rows of a job's recipients per message: inserted, sent, delivered, read (two receipts folded in one
   * batch are one write). The take names its recipient on the lane, not on the row (measured 3.5; 4.4
   * while it marked the row).
   */
  recipientRowWrites: 4.1,
  /**
   * Rows of the account's lane per message: the take books the slot, names the recipient and counts
   * it; a plain send's record leaves the lane as it is (measured 1.0; 2.0 while the record rescheduled).
   */
  laneRowWrites: 1.2,
  /** Rows the whole system writes per message (jobs and sessions, the simulated phone's log included; measured 12.4; 14.0 while a send's record rescheduled the lane, 15.3 with a stored "Message sent" line, 17.9 before receipts left the ledger and the take's mark the recipient). */
  systemRowWrites: 14,
  /**
   * Rows of the send ledger (sessions.sends) per message: its claim and its sent mark. Receipts are
   * events, not ledger writes (measured 2.0; 4.0 while each receipt updated the row).
   */
  ledgerRowWrites: 2.2,
  /** Commits per message in the system's database (one account steps one message per transaction; measured 6.4 quiet, 12.1 on a loaded machine). */
  commits: 13.5,
  /** Statements per message in the system's database, foreign-key checks included (measured 16.4 quiet, 29.9 on a loaded machine). */
  statements: 33,
  /**
   * Foreign-key lookups per message (the checks Postgres runs for a key: a lookup and a row lock each).
   * A job's recipients and its log lines have none; what is left is per job (its start key, its
   * receipts' totals): measured 0.004.
   */
  keyLookups: 0.05,
};
describe('what a plain campaign writes per message (real Postgres, NATS, sessions simulator)', () => {
  let postgres: Postgres;
  let sys: System;
  let ann: User;
  let db: pg.Client;

  beforeAll(async () => {
    postgres = await startPostgres({
      flags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'],
    });
    sys = await startSystem({
      postgres,
      shards: 1,
      services: ['sessions', 'jobs'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: '100',
        SIM_READ_DELAY_MS: '200',
      },
      serviceEnv: { jobs: { SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' } },
      // A shared machine may take minutes to start the services; the counts do not depend on it.
      startTimeoutMs: 400_000,
    });
    db = new pg.Client({ connectionString: postgres.url });
    await db.connect();
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    ann = await signInLinked(sys.gateway.url, 'budget@example.com');
  }, 600_000);

  afterAll(async () => {
    ann?.tab.close();
    await db?.end();
    await sys?.stop();
    await postgres?.stop();
  });

  it(`a ${RECIPIENTS}-recipient job stays within the budget per message`, async () => {
    const before = await settledWrites(db);
    const jobId = await startJob(ann, { message: 'Budget', phoneNumbers: numbers(RECIPIENTS, 61_000_000) });
    const done = await waitForJob(ann, jobId, isFinished, 240_000);
    expect(done.progress).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0 });
    await waitFor(() => receiptsFolded(db, jobId, RECIPIENTS), 60_000, 200, 'every receipt folded');
    const after = await settledWrites(db);
    const per = (a: number, b: number) => (a - b) / RECIPIENTS;
    const figures = {
      jobsRowWrites: per(rowsOf(after, 'jobs.'), rowsOf(before, 'jobs.')),
      systemRowWrites: per(rowsOf(after, ''), rowsOf(before, '')),
      ledgerRowWrites: per(rowsOf(after, 'sessions.sends'), rowsOf(before, 'sessions.sends')),
      recipientRowWrites: per(rowsOf(after, 'jobs.job_recipients'), rowsOf(before, 'jobs.job_recipients')),
      laneRowWrites: per(rowsOf(after, 'jobs.lanes'), rowsOf(before, 'jobs.lanes')),
      commits: per(after.commits, before.commits),
      statements: per(after.statements, before.statements),
      keyLookups: per(after.keyLookups, before.keyLookups),
    };
    const byTable = perMessageByTable(before, after, RECIPIENTS);
    // Printed so a failure (or a tightening) shows where the writes went.
    console.log(`per message: ${JSON.stringify(figures)}; row writes by table: ${JSON.stringify(byTable)}`);
    expect(figures.jobsRowWrites).toBeLessThanOrEqual(BUDGET.jobsRowWrites);
    expect(figures.systemRowWrites).toBeLessThanOrEqual(BUDGET.systemRowWrites);
    expect(figures.ledgerRowWrites).toBeLessThanOrEqual(BUDGET.ledgerRowWrites);
    expect(figures.recipientRowWrites).toBeLessThanOrEqual(BUDGET.recipientRowWrites);
    expect(figures.laneRowWrites).toBeLessThanOrEqual(BUDGET.laneRowWrites);
    expect(figures.commits).toBeLessThanOrEqual(BUDGET.commits);
    expect(figures.statements).toBeLessThanOrEqual(BUDGET.statements);
    expect(figures.keyLookups).toBeLessThanOrEqual(BUDGET.keyLookups);
  }, 420_000);
});
