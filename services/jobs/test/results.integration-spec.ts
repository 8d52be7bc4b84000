import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { strFromU8, unzipSync } from 'fflate';
import {
  EXPORT_COLUMNS,
  IDEMPOTENCY_KEY_HEADER,
  RESULTS_LIMITS,
  RESULTS_MESSAGES,
  type JobHistoryItem,
  type RecipientResult,
} from '@bns/contracts';
import { startSystem, waitFor, type System } from '@bns/testing';
import { cancelJob, numbers, signInLinked, type User } from './helpers.js';

/**
 * Campaign results end to end: real gateway, jobs, sessions (simulated WhatsApp), NATS and
 * Postgres. Sending is slow (SEND_DELAY_MS) so big jobs stay active while their report is read; a
 * small job of another user goes fast enough to collect its receipts.
 */
describe('campaign results (idempotent start, caps, report, export, receipts, history)', () => {
  let sys: System;
  let ann: User;
  let bob: User;
  let cat: User;
  let nc: NatsConnection;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: '100',
        SIM_READ_DELAY_MS: '300',
      },
      serviceEnv: {
        jobs: { SEND_DELAY_MS: '200', JOBS_MAX_ACTIVE_PER_USER: '3', JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: '12000' },
        gateway: { START_BODY_LIMIT: '1mb' },
      },
    });
    [ann, bob, cat] = await Promise.all([
      signInLinked(sys.gateway.url, 'ann@results.test'),
      signInLinked(sys.gateway.url, 'bob@results.test'),
      signInLinked(sys.gateway.url, 'cat@results.test'),
    ]);
    nc = await connect({ servers: sys.nats.url });
  }, 180_000);

  afterAll(async () => {
    for (const u of [ann, bob, cat]) u?.tab.close();
    await nc?.close();
    await sys?.stop();
  });

  const start = (user: User, body: Record<string, unknown>, key?: string) =>
    user.client.post(
      '/start-bulk-messages',
      { clerkUserId: user.userId, ...body },
      key ? { [IDEMPOTENCY_KEY_HEADER]: key } : {},
    );
  const history = async (user: User): Promise<JobHistoryItem[]> => {
    const res = await user.client.get(`/api/jobs/${encodeURIComponent(user.userId)}?limit=50`);
    expect(res.status).toBe(200);
    return res.body.jobs;
  };
  const cancelAll = async (user: User) => {
    for (const j of await history(user)) if (['queued', 'running'].includes(j.status)) await cancelJob(user, j.jobId);
  };

  it('an Idempotency-Key makes one job: a retry, concurrent duplicates, and 409 for another body', async () => {
    const body = { message: 'Hello', phoneNumbers: numbers(3, 61_000_000) };
    const key = randomUUID();
    const first = await start(ann, body, key);
    expect(first.status).toBe(200);
    const again = await start(ann, body, key);
    expect(again.status).toBe(200);
    expect(again.body.jobId).toBe(first.body.jobId);

    const burstKey = randomUUID();
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => start(ann, { message: 'Burst', phoneNumbers: numbers(2, 62_000_000) }, burstKey)),
    );
    const ids = new Set(burst.map((r) => r.body.jobId));
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(ids.size).toBe(1);

    const other = await start(ann, { message: 'Something else', phoneNumbers: numbers(3, 61_000_000) }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ success: false, error: RESULTS_MESSAGES.idempotencyKeyReused });

    const bad = await start(ann, body, 'x'.repeat(300));
    expect(bad.status).toBe(400);

    const jobs = await history(ann);
    expect(jobs.filter((j) => j.messagePreview === 'Hello')).toHaveLength(1);
    expect(jobs.filter((j) => j.messagePreview === 'Burst')).toHaveLength(1);
    await cancelAll(ann);
  }, 60_000);

  it('a start body over START_BODY_LIMIT is a 413 with a clear message, never a 500', async () => {
    const recipients = numbers(20_000, 70_000_000).map((phone, i) => ({
      phone,
      variables: { name: `Customer number ${i}` },
    }));
    const res = await start(ann, { message: 'Hi {{name}}', recipients });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('caps work in flight per user: 429 past the queued recipients and past the active jobs', async () => {
    expect((await start(cat, { message: 'A', phoneNumbers: numbers(5000, 63_000_000) })).status).toBe(200);
    expect((await start(cat, { message: 'B', phoneNumbers: numbers(5000, 64_000_000) })).status).toBe(200);
    const queued = await start(cat, { message: 'C', phoneNumbers: numbers(5000, 65_000_000) });
    expect(queued.status).toBe(429);
    expect(queued.body.error).toMatch(/^At most 12,000 recipients can wait/);
    expect((await start(cat, { message: 'D', phoneNumbers: numbers(10, 66_000_000) })).status).toBe(200);
    const active = await start(cat, { message: 'E', phoneNumbers: numbers(10, 67_000_000) });
    expect(active.status).toBe(429);
    expect(active.body.error).toBe(RESULTS_MESSAGES.tooManyActiveJobs(3));
    // Another user is not held back by this one's caps.
    const other = await start(bob, { message: 'Not capped', phoneNumbers: numbers(1, 68_000_000) });
    expect(other.status).toBe(200);

    // `active=true`: only the unfinished jobs, newest first (what a reloaded tab follows), never another user's.
    const activeOf = async (user: User, query = 'active=true') => {
      const res = await user.client.get(`/api/jobs/${encodeURIComponent(user.userId)}?${query}`);
      expect(res.status).toBe(200);
      return (res.body.jobs as JobHistoryItem[]).map((j) => j.messagePreview);
    };
    expect(await activeOf(cat)).toEqual(['D', 'B', 'A']);
    expect(await activeOf(cat, 'active=true&limit=2')).toEqual(['D', 'B']);
    // Bob's one-recipient job may be done already: what matters is that none of Cat's is in his list.
    expect((await activeOf(bob)).filter((p) => ['A', 'B', 'D'].includes(p))).toEqual([]);
    const bad = await cat.client.get(`/api/jobs/${encodeURIComponent(cat.userId)}?active=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      success: false,
      error: RESULTS_MESSAGES.invalidActive,
      code: 'JOB_RESULTS_QUERY_INVALID',
    });
    await cancelAll(cat);
    await cancelAll(bob);
    expect(await activeOf(cat)).toEqual([]);
    expect((await activeOf(cat, 'active=false')).slice(0, 3)).toEqual(['D', 'B', 'A']);
  }, 60_000);

  it('pages through a 5,000-recipient personalised job: every recipient exactly once, with its variables; exports CSV and XLSX', async () => {
    const phones = numbers(5000, 90_000_000);
    const recipients = phones.map((phone, i) => ({
      phone,
      variables: { name: `Customer ${i}`, code: `C-${i}`, city: 'Hong Kong' },
    }));
    // About 400 KB: staged through the object store, not one NATS message.
    const started = await start(bob, { message: 'Hi {{name}}, your code is {{code}}', recipients }, randomUUID());
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;

    const seen: RecipientResult[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { results: RecipientResult[]; nextCursor: string | null } } =
        await bob.client.get(`/job-results/${jobId}?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.results);
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(10);
    expect(seen.map((r) => r.phoneNumber)).toEqual(phones);
    expect(seen[7]).toMatchObject({
      phoneNumber: phones[7],
      variables: { name: 'Customer 7', code: 'C-7', city: 'Hong Kong' },
    });
    expect(seen.every((r) => ['pending', 'sent', 'delivered', 'read'].includes(r.status))).toBe(true);
    // The history says which campaigns were personalised: this one, and not a plain one of the same user.
    const plain = await start(bob, { message: 'Plain', phoneNumbers: numbers(2, 90_100_000) }, randomUUID());
    expect(plain.status).toBe(200);
    const flags = new Map((await history(bob)).map((j) => [j.jobId, j.personalised]));
    expect([flags.get(jobId), flags.get(plain.body.jobId as string)]).toEqual([true, false]);
    await cancelJob(bob, plain.body.jobId as string);

    const pending = await bob.client.get(`/job-results/${jobId}?status=pending&limit=5`);
    expect(pending.body.results.every((r: RecipientResult) => r.status === 'pending')).toBe(true);
    expect((await bob.client.get(`/job-results/${jobId}?limit=501`)).status).toBe(400);
    expect((await bob.client.get(`/job-results/${jobId}?status=lost`)).status).toBe(400);
    expect((await bob.client.get(`/job-results/${jobId}?cursor=abc`)).status).toBe(400);
    // A repeated name reaches the schema as a list: the field's own words, never the parser's.
    for (const [path, error] of [
      [`/job-results/${jobId}?limit=1&limit=2`, RESULTS_MESSAGES.invalidLimit(RESULTS_LIMITS.reportPageMax)],
      [`/job-results/${jobId}?cursor=a&cursor=b`, RESULTS_MESSAGES.invalidCursor],
      [`/job-results/${jobId}/export?format=csv&format=csv`, RESULTS_MESSAGES.invalidFormat],
      [
        `/api/jobs/${encodeURIComponent(bob.userId)}?limit=5&limit=6`,
        RESULTS_MESSAGES.invalidLimit(RESULTS_LIMITS.historyPageMax),
      ],
    ] as const) {
      const res = await bob.client.get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { success: false, error: error, code: 'JOB_RESULTS_QUERY_INVALID' },
      });
    }

    const csv = await fetch(`${sys.gateway.url}/job-results/${jobId}/export?format=csv`, {
      headers: { authorization: `Bearer ${bob.token}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text())
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines).toHaveLength(5001);
    expect(lines[0]!.split(',')).toEqual([...EXPORT_COLUMNS, 'var:city', 'var:code', 'var:name']);
    expect(new Set(lines.slice(1).map((l) => l.split(',')[0])).size).toBe(5000);

    const xlsx = await fetch(`${sys.gateway.url}/job-results/${jobId}/export?format=xlsx`, {
      headers: { authorization: `Bearer ${bob.token}` },
    });
    expect(xlsx.status).toBe(200);
    const files = unzipSync(new Uint8Array(await xlsx.arrayBuffer()));
    const sheet = strFromU8(files['xl/worksheets/sheet1.xml']!);
    expect(sheet.match(/<row /g)).toHaveLength(5001);
    expect(sheet).toContain('<t>var:name</t>');
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['[Content_Types].xml', 'xl/workbook.xml']));

    expect((await bob.client.get(`/job-results/${jobId}/export?format=pdf`)).status).toBe(400);
    await cancelAll(bob);
  }, 90_000);

  it('folds delivered, read and replies into the report and the history; another user sees none of it', async () => {
    const phones = numbers(3, 51_000_000);
    const started = await start(ann, { message: 'Receipts please', phoneNumbers: phones });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;

    const report = () =>
      ann.client.get(`/job-results/${jobId}?limit=10`).then((r) => r.body.results as RecipientResult[]);
    const read = await waitFor(
      async () => {
        const rows = await report();
        return rows.every((r) => r.status === 'read') ? rows : undefined;
      },
      30_000,
      200,
      'read receipts in the report',
    );
    expect(read.every((r) => r.sentAt && r.deliveredAt && r.readAt && r.repliedAt === null)).toBe(true);

    // A reply from the second number (as sessions publishes it).
    await jetstream(nc).publish(
      'events.message.received',
      JSON.stringify({
        eventId: randomUUID(),
        userId: ann.userId,
        at: new Date().toISOString(),
        from: `852${phones[1]}`,
        // A NUL cannot be stored: it is dropped; a formula is kept as text, and never runs in the export.
        text: '=1+1 Thanks\u0000!',
        messageId: randomUUID(),
      }),
    );
    const replied = await waitFor(
      async () => {
        const rows = await report();
        return rows[1]!.status === 'replied' ? rows : undefined;
      },
      15_000,
      200,
      'the reply in the report',
    );
    expect(replied[1]!.repliedAt).not.toBeNull();
    // The reply is readable: its text and time on the recipient, in the export, and found by number.
    expect(replied[1]!.replies).toEqual([{ text: '=1+1 Thanks!', at: replied[1]!.repliedAt }]);
    expect(replied[0]!.replies).toBeUndefined();
    const csv = await fetch(`${sys.gateway.url}/job-results/${jobId}/export?format=csv`, {
      headers: { authorization: `Bearer ${ann.token}` },
    });
    expect(csv.status).toBe(200);
    const csvLines = (await csv.text())
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    expect(csvLines[0]).toContain('Replied at,Replies');
    expect(csvLines[2]).toMatch(new RegExp(`^${phones[1]},Replied,replied,.*,'=1\\+1 Thanks!$`));
    for (const q of [phones[1]!, `852${phones[1]}`, `+852 ${phones[1]!.slice(0, 4)} ${phones[1]!.slice(4)}`]) {
      const found = await ann.client.get(`/job-results/${jobId}?q=${encodeURIComponent(q)}`);
      expect(found.status).toBe(200);
      expect((found.body.results as RecipientResult[]).map((r) => r.phoneNumber)).toEqual([phones[1]]);
    }
    const badSearch = await ann.client.get(`/job-results/${jobId}?q=abc`);
    expect([badSearch.status, badSearch.body.error]).toEqual([400, RESULTS_MESSAGES.invalidReportSearch]);

    const item = await waitFor(
      async () => (await history(ann)).find((j) => j.jobId === jobId && j.receipts.replied === 1),
      10_000,
      200,
      'history',
    );
    expect(item).toMatchObject({
      status: 'completed',
      progress: { total: 3, sent: 3, failed: 0 },
      receipts: { delivered: 3, read: 3, replied: 1 },
      messagePreview: 'Receipts please',
    });

    // Ann's jobs are Ann's alone.
    expect((await history(bob)).some((j) => j.jobId === jobId)).toBe(false);
    expect((await bob.client.get(`/api/jobs/${encodeURIComponent(ann.userId)}`)).status).toBe(403);
    expect((await bob.client.get(`/job-results/${jobId}`)).status).toBe(404);
    expect((await bob.client.get(`/job-results/${jobId}/export`)).status).toBe(404);
    expect((await bob.client.get(`/api/jobs/${encodeURIComponent(bob.userId)}?cursor=${jobId}`)).status).toBe(400);
  }, 60_000);
});
