import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ACCOUNT_DATA_OWNERS, type DeletionStatus } from '@bns/contracts';
import { api, devSignIn, sleep, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser, type Client } from './helpers.js';

/**
 * Deleting an account across every service: campaigns cancelled, WhatsApp logged out, every row of
 * every schema holding the user's id or one of the numbers only they sent to gone, another account's
 * rows with the shared numbers untouched; the old tokens refused at once; a kill -9 of an owner and of
 * the coordinator mid-way, completed after their restart; a new sign-in with the same e-mail is the
 * same user id with an empty account.
 */

const SHARED = ['51230001', '51230002', '51230003'];
/** Numbers only the deleted account sent to: after the deletion no row anywhere may hold them. */
const OWN = Array.from({ length: 40 }, (_, i) => String(51240000 + i));

async function deleteAccount(client: Client, email: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${client.gatewayUrl}/api/account`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  return { status: res.status, body: await res.json() };
}

async function startJob(user: Client, phones: string[]): Promise<string> {
  const res = await user.post('/start-bulk-messages', {
    clerkUserId: user.userId,
    message: 'Hello {{name}}',
    recipients: phones.map((phone, i) => ({ phone, variables: { name: `#${i}` } })),
  });
  if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.jobId as string;
}

/** Rows, in every table of every schema, whose text holds any of `needles`: `schema.table` → count. */
async function scan(db: pg.Client, needles: string[]): Promise<Record<string, number>> {
  const tables = await db.query<{ s: string; t: string }>(
    `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const found: Record<string, number> = {};
  for (const { s, t } of tables.rows) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${s}"."${t}" x WHERE x::text LIKE ANY ($1::text[])`,
      [needles.map((n) => `%${n}%`)],
    );
    if (rows[0]!.n > 0) found[`${s}.${t}`] = rows[0]!.n;
  }
  return found;
}

describe('account deletion across every service', () => {
  let sys: System;
  let db: pg.Client;
  let annKey = '';
  let ann: Client & { gatewayUrl: string };
  let bob: Client & { gatewayUrl: string };
  const restarted: ServiceHandle[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      services: ['templates', 'jobs', 'dashboard', 'sessions', 'integrations', 'contacts'],
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
      // Slow enough that ann's campaign is still sending when her account is deleted.
      serviceEnv: { jobs: { SEND_DELAY_MS: '300', JOBS_POLL_MS: '100' } },
    });
    db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    ann = { ...(await linkedUser(sys.gateway.url, 'ann')), gatewayUrl: sys.gateway.url };
    bob = { ...(await linkedUser(sys.gateway.url, 'bob')), gatewayUrl: sys.gateway.url };
  }, 240_000);

  afterAll(async () => {
    await db?.end();
    await Promise.all(restarted.map((h) => h.stop()));
    await sys?.stop();
  });

  it('deletes every row of the account, survives kill -9s, refuses old tokens and leaves a new empty account', async () => {
    // Both accounts hold data under the same numbers; ann also under numbers of her own.
    for (const who of [ann, bob]) {
      const t = await who.post(`/api/templates/${who.userId}`, {
        name: 'Greeting',
        message_content: 'Hi {{name}}',
        phone_numbers: [...SHARED, ...(who === ann ? OWN.slice(0, 2) : [])],
      });
      expect(t.status).toBe(201);
      expect((await who.post(`/api/opt-outs/${who.userId}`, { phoneNumbers: [SHARED[0]] })).status).toBe(200);
      const key = await createKey(who, ALL_SCOPES);
      if (who === ann) annKey = key.secret;
    }
    // The gateway now remembers ann's key.
    expect((await api(sys.gateway.url, annKey).get('/v1/templates')).status).toBe(200);
    const bobJob = await startJob(bob, SHARED.slice(1));
    const annDone = await startJob(ann, [...SHARED.slice(1), OWN[2]!]);
    await waitFor(
      async () => {
        const [a, b] = await Promise.all([ann.get(`/job-status/${annDone}`), bob.get(`/job-status/${bobJob}`)]);
        return a.body.job?.status === 'completed' && b.body.job?.status === 'completed' ? true : undefined;
      },
      60_000,
      250,
      'both first campaigns to complete',
    );
    const running = await startJob(ann, OWN.slice(3));
    await waitFor(
      async () => ((await ann.get(`/job-status/${running}`)).body.job?.progress.sent > 0 ? true : undefined),
      30_000,
      100,
      "ann's second campaign to start sending",
    );
    expect(Object.keys(await scan(db, [ann.userId])).length).toBeGreaterThan(5);

    // A wrong e-mail is refused and changes nothing.
    const wrong = await deleteAccount(ann, 'someone-else@example.com');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error ?? wrong.body.message).toBeDefined();
    expect((await ann.get(`/api/templates/${ann.userId}`)).status).toBe(200);

    // The dashboard is down when the deletion is asked for: its part waits for it.
    const dashboard = sys.services.find((h) => h.name === 'dashboard')!;
    await dashboard.kill9();
    const started = Date.now();
    const accepted = await deleteAccount(ann, ann.email.toUpperCase());
    expect(accepted.status).toBe(202);
    expect(typeof accepted.body.deletionId).toBe('string');
    // Every token issued before is refused at once.
    expect((await ann.get(`/api/templates/${ann.userId}`)).status).toBe(401);

    // The coordinator dies right after; the receipts wait in the stream for it.
    const integrations = sys.services.find((h) => h.name === 'integrations')!;
    await integrations.kill9();
    restarted.push(await sys.start('integrations'));

    // A new sign-in with the same e-mail is the same user, and can follow the deletion.
    await sleep(1100); // iat has whole seconds: a token of the deletion's second is refused too
    const again = await devSignIn(sys.gateway.url, ann.email, 'Ann');
    expect(again.userId).toBe(ann.userId);
    const annAgain = api(sys.gateway.url, again.token);
    const midway = await waitFor(
      async () => {
        const r = await annAgain.get<DeletionStatus>('/api/account/deletion');
        if (r.status !== 200) return undefined;
        const others = ACCOUNT_DATA_OWNERS.filter((s) => s !== 'dashboard');
        return others.every((s) => r.body.services[s]?.status === 'done') ? r.body : undefined;
      },
      60_000,
      250,
      'every owner but the dashboard to answer',
    );
    expect(midway.status).toBe('running');
    expect(midway.services.dashboard!.status).toBe('running');

    restarted.push(await sys.start('dashboard'));
    const done = await waitFor(
      async () => {
        const r = await annAgain.get<DeletionStatus>('/api/account/deletion');
        return r.status === 200 && r.body.status === 'done' ? r.body : undefined;
      },
      60_000,
      250,
      'the deletion to finish',
    );
    const tookMs = Date.now() - started;
    expect(done.deletionId).toBe(accepted.body.deletionId);
    expect(Object.keys(done.services).sort()).toEqual([...ACCOUNT_DATA_OWNERS].sort());
    process.stdout.write(`account deletion with two restarts took ${tookMs} ms\n`);

    // No row anywhere holds ann's id, nor a number only she sent to.
    await sleep(500); // the outboxes' published rows are deleted a moment after their publish
    expect(await scan(db, [ann.userId, ...OWN])).toEqual({});

    // Bob's rows with the same numbers are untouched.
    const bobTemplates = (await bob.get(`/api/templates/${bob.userId}`)).body;
    expect(JSON.stringify(bobTemplates)).toContain(SHARED[2]);
    const bobOptOuts = await bob.get(`/api/opt-outs/${bob.userId}`);
    expect(JSON.stringify(bobOptOuts.body)).toContain(SHARED[0]);
    const bobStatus = await bob.get(`/job-status/${bobJob}`);
    expect(bobStatus.body.job.status).toBe('completed');
    expect(Object.keys(await scan(db, [bob.userId])).length).toBeGreaterThan(5);

    // The same user id, an empty account.
    const templates = await annAgain.get(`/api/templates/${ann.userId}`);
    expect(templates.status).toBe(200);
    expect(JSON.stringify(templates.body)).not.toContain('Greeting');
    const optOuts = await annAgain.get(`/api/opt-outs/${ann.userId}`);
    expect(JSON.stringify(optOuts.body)).not.toContain(SHARED[0]);
    expect((await annAgain.get(`/job-status/${running}`)).status).toBe(404);
    expect((await annAgain.get('/api/keys')).body.keys).toEqual([]);
    // Her API key is gone from every gateway's memory too.
    expect((await api(sys.gateway.url, annKey).get('/v1/templates')).status).toBe(401);
    // The old token stays refused.
    expect((await ann.get(`/api/templates/${ann.userId}`)).status).toBe(401);
  }, 300_000);
});
