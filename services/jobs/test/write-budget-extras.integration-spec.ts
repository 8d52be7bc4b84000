import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { api, mediaFiles, startPostgres, startSystem, waitFor, type Postgres, type System } from '@bns/testing';
import { isFinished, numbers, signInLinked, startJob, waitForJob, type User } from './helpers.js';
import { perMessageByTable, receiptsFolded, rowsOf, settledWrites, type Counts } from './write-counts.js';

/**
 * What the parts beside a plain campaign add to its Postgres writes per message, pinned like the plain
 * budget (write-budget.integration-spec.ts): the contact book (it learns every message's status, for
 * every account), a webhook endpoint subscribed to message.sent, .delivered and .read (each delivery
 * recorded), and an attachment (a PDF every recipient gets). Two accounts in one system: a plain job
 * first, then the same job with an endpoint and a file; each measured from its start until every
 * receipt is folded, every webhook delivered and the counts settle.
 */
const RECIPIENTS = 200;
const BUDGET = {
  /**
   * The contact book's rows per message of any campaign (its schema's tables; measured 12.0: each of
   * sent, delivered and read is a message row, an outcome row and a fact row, plus the contact, its
   * conversation and the count's delta).
   */
  contacts: 13,
  /** The webhook deliveries' rows per message with an endpoint for its three events (the integrations schema; measured 9.0: each delivery inserted, taken and done). */
  webhooks: 9.5,
  /** What a file adds per message to jobs and sessions (one job, one stored file; the receipt-batched tables aside: measured 0.01). */
  attachment: 0.5,
};
const EVENTS = ['message.sent', 'message.delivered', 'message.read'];
/** Tables whose writes per message follow how receipts batch (see `addedBesideReceipts`). */
const RECEIPT_BATCHED = new Set(['jobs.job_recipients', 'jobs.job_receipts', 'jobs.outbox', 'sessions.outbox']);

describe('what contacts, webhooks and attachments add per message (real Postgres, NATS, services)', () => {
  let postgres: Postgres;
  let sys: System;
  let db: pg.Client;
  let receiver: Server;
  let hits = 0;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits++;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    postgres = await startPostgres({
      flags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'],
    });
    sys = await startSystem({
      postgres,
      shards: 1,
      services: ['sessions', 'jobs', 'contacts', 'integrations'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: '100',
        SIM_READ_DELAY_MS: '200',
      },
      serviceEnv: {
        jobs: { SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' },
        integrations: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '200' },
      },
      startTimeoutMs: 400_000,
    });
    db = new pg.Client({ connectionString: postgres.url });
    await db.connect();
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  }, 600_000);

  afterAll(async () => {
    await db?.end();
    await sys?.stop();
    await postgres?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  /** Runs `user`'s job of RECIPIENTS to the end (receipts folded, `webhooks` deliveries received) and counts what it wrote. */
  const measured = async (user: User, body: Record<string, unknown>, webhooks: number) => {
    const before = await settledWrites(db);
    const hitsBefore = hits;
    const jobId = await startJob(user, body);
    const done = await waitForJob(user, jobId, isFinished, 240_000);
    expect(done.progress).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0 });
    // An endpoint gets one POST at a time: 600 deliveries in a row take minutes on a loaded CI machine.
    let folded = false;
    await waitFor(
      async () => {
        folded ||= await receiptsFolded(db, jobId, RECIPIENTS);
        if (folded && hits - hitsBefore >= webhooks) return true;
        // What is still missing, for the time-out's message.
        throw new Error(`receipts folded: ${folded}; webhooks delivered: ${hits - hitsBefore} of ${webhooks}`);
      },
      300_000,
      200,
      'every receipt folded and every webhook delivered',
    );
    const after = await settledWrites(db);
    return { before, after };
  };
  const per = (c: { before: Counts; after: Counts }, prefix: string) =>
    (rowsOf(c.after, prefix) - rowsOf(c.before, prefix)) / RECIPIENTS;
  /**
   * What the second job wrote per message in jobs and sessions beyond the first, table by table, left
   * out the tables whose writes follow how receipts happen to batch (a receipt folded alone or with
   * others: a few tenths either way between two identical jobs); the plain budget pins those.
   */
  const addedBesideReceipts = (plain: { before: Counts; after: Counts }, extras: { before: Counts; after: Counts }) => {
    const a = perMessageByTable(plain.before, plain.after, RECIPIENTS);
    const b = perMessageByTable(extras.before, extras.after, RECIPIENTS);
    return Object.entries(b)
      .filter(([t]) => /^(jobs|sessions)\./.test(t) && !RECEIPT_BATCHED.has(t))
      .reduce((sum, [t, n]) => sum + Math.max(0, n - (a[t] ?? 0)), 0);
  };

  it(`a ${RECIPIENTS}-recipient job: the contact book, a webhook endpoint and a file stay within their budgets`, async () => {
    const plainUser = await signInLinked(sys.gateway.url, 'extras-plain@example.com');
    const plain = await measured(plainUser, { message: 'Plain', phoneNumbers: numbers(RECIPIENTS, 62_000_000) }, 0);
    plainUser.tab.close();

    const ann = await signInLinked(sys.gateway.url, 'extras-ann@example.com');
    const hook = await api(sys.gateway.url, ann.token).post('/api/webhooks', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      events: EVENTS,
    });
    expect(hook.status).toBe(201);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(mediaFiles.pdf('BT (Prices) Tj ET'))]), 'prices.pdf');
    const upload = await fetch(`${sys.gateway.url}/api/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ann.token}` },
      body: form,
    });
    expect(upload.status).toBe(201);
    const { mediaId } = (await upload.json()) as { mediaId: string };
    const extras = await measured(
      ann,
      { message: 'With a file', phoneNumbers: numbers(RECIPIENTS, 63_000_000), mediaId },
      RECIPIENTS * EVENTS.length,
    );
    ann.tab.close();

    const figures = {
      contacts: per(plain, 'contacts.'),
      webhooks: per(extras, 'integrations.') - per(plain, 'integrations.'),
      attachment: addedBesideReceipts(plain, extras),
    };
    // Printed so a failure (or a tightening) shows where the writes went.
    console.log(
      `added per message: ${JSON.stringify(figures)}; plain job by table: ${JSON.stringify(perMessageByTable(plain.before, plain.after, RECIPIENTS))}; ` +
        `with an endpoint and a file, by table: ${JSON.stringify(perMessageByTable(extras.before, extras.after, RECIPIENTS))}`,
    );
    // The contact book learns every campaign: it must have written something, and no more than its budget.
    expect(figures.contacts).toBeGreaterThan(0);
    expect(figures.contacts).toBeLessThanOrEqual(BUDGET.contacts);
    expect(figures.webhooks).toBeGreaterThan(0);
    expect(figures.webhooks).toBeLessThanOrEqual(BUDGET.webhooks);
    expect(figures.attachment).toBeLessThanOrEqual(BUDGET.attachment);
  }, 600_000);
});
