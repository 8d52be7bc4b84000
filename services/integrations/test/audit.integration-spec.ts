import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ACCOUNT_MESSAGES, apiKeyActor, type AuditEntry, type AuditKind } from '@bns/contracts';
import { api, startSystem, waitFor, type System } from '@bns/testing';
import { createKey, linkedUser, signIn, type Client } from './helpers.js';

/**
 * The audit log through the real gateway, integrations, jobs, sessions and templates services, NATS and
 * Postgres: each action is recorded where it is performed, with its actor and the client's truncated
 * address; a page at a time, filtered by kind; through an API key at /v1/audit; never another user's
 * entries, and no call or statement changes an entry.
 */

let sys: System;
let db: pg.Client;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' }, integrations: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } },
  });
  db = new pg.Client({ connectionString: sys.postgres.url });
  await db.connect();
}, 180_000);

afterAll(async () => {
  await db?.end();
  await sys?.stop();
});

async function entries(user: Client, query = ''): Promise<AuditEntry[]> {
  const res = await user.get(`/api/audit${query}`);
  expect(res.status).toBe(200);
  return res.body.entries as AuditEntry[];
}

/** Waits until the log holds every kind in `kinds` (entries arrive through JetStream). */
async function untilLogged(user: Client, kinds: AuditKind[]): Promise<AuditEntry[]> {
  let found: AuditEntry[] = [];
  await waitFor(
    async () => {
      found = await entries(user, '?limit=200');
      return kinds.every((k) => found.some((e) => e.kind === k));
    },
    15_000,
    100,
    `audit entries ${kinds.join(', ')}`,
  );
  return found;
}

describe('audit log', () => {
  it('records each action with its actor and the address cut to /24, newest first', async () => {
    const ann = await linkedUser(sys.gateway.url, 'ann');
    const key = await createKey(ann, ['read', 'campaigns:write']);
    const prefix = key.secret.slice(0, 12);

    const hook = await ann.post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['message.sent'] });
    expect(hook.status).toBe(201);
    expect((await ann.patch(`/api/webhooks/${hook.body.id}`, { enabled: false })).status).toBe(200);
    expect((await ann.delete(`/api/webhooks/${hook.body.id}`)).status).toBe(200);
    expect((await ann.put(`/api/sending-policy/${ann.userId}`, { preset: 'careful' })).status).toBe(200);
    expect((await ann.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: ['91234567'] })).status).toBe(200);
    expect((await ann.delete(`/api/opt-outs/${ann.userId}/91234567`)).status).toBe(200);

    const started = await ann.post('/start-bulk-messages', {
      clerkUserId: ann.userId,
      message: 'Hello',
      phoneNumbers: ['91234567', '92345678', '93456789'],
    });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    expect((await ann.post(`/cancel-job/${jobId}`)).status).toBe(200);
    // Through the key: its prefix is the actor.
    expect((await api(sys.gateway.url, key.secret).post('/v1/opt-outs', { phoneNumbers: ['94567890'] })).status).toBe(
      201,
    );
    expect((await ann.delete(`/api/keys/${key.id}`)).status).toBe(200);

    const log = await untilLogged(ann, [
      'auth.signed_in',
      'whatsapp.linked',
      'api_key.created',
      'webhook.added',
      'webhook.changed',
      'webhook.removed',
      'policy.changed',
      'opt_out.added',
      'opt_out.removed',
      'campaign.started',
      'campaign.cancelled',
      'api_key.revoked',
    ]);
    const byKind = (k: AuditKind) => log.filter((e) => e.kind === k);
    expect(byKind('auth.signed_in')[0]).toMatchObject({ actor: ann.email, address: '127.0.0.0/24' });
    expect(byKind('whatsapp.linked')[0]).toMatchObject({ actor: 'whatsapp' });
    expect(byKind('api_key.created')[0]).toMatchObject({
      actor: ann.email,
      address: '127.0.0.0/24',
      details: { keyId: key.id, prefix },
    });
    expect(byKind('campaign.started')[0]!.details).toEqual({ campaignId: jobId });
    expect(byKind('campaign.cancelled')[0]!.details).toEqual({ campaignId: jobId });
    expect(byKind('webhook.removed')[0]!.details).toEqual({ webhookId: hook.body.id });
    // One by hand (the person), one through the key (its prefix).
    expect(
      byKind('opt_out.added')
        .map((e) => e.actor)
        .sort(),
    ).toEqual([ann.email, apiKeyActor(prefix)].sort());
    // Newest first, and the last action is the first entry.
    const times = log.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(log[0]!.kind).toBe('api_key.revoked');
    // Never a full address.
    expect(JSON.stringify(log)).not.toContain('127.0.0.1');
  });

  it('pages with nextCursor, filters by kind, refuses a limit over 200 in plain words', async () => {
    const bo = await signIn(sys.gateway.url, 'bo');
    for (let i = 0; i < 4; i++) await createKey(bo, ['read'], `k${i}`);
    await untilLogged(bo, ['api_key.created']);
    await waitFor(async () => (await entries(bo, '?kind=api_key.created')).length === 4, 10_000, 100, 'four keys');

    const first = await bo.get('/api/audit?limit=3');
    expect(first.body.entries).toHaveLength(3);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await bo.get(`/api/audit?limit=3&cursor=${first.body.nextCursor}`);
    expect(second.status).toBe(200);
    expect(second.body.entries).toHaveLength(2); // 4 keys + the sign-in = 5 entries
    expect(second.body.nextCursor).toBeNull();
    expect(second.body.entries.at(-1).kind).toBe('auth.signed_in');

    const keysOnly = await entries(bo, '?kind=api_key.created');
    expect(keysOnly.map((e) => e.kind)).toEqual(Array(4).fill('api_key.created'));

    const over = await bo.get('/api/audit?limit=201');
    expect(over.status).toBe(400);
    expect(over.body.error).toBe(ACCOUNT_MESSAGES.auditLimitInvalid);
    expect((await bo.get('/api/audit?kind=everything')).status).toBe(400);
    expect((await bo.get('/api/audit?cursor=bm90LWEtY3Vyc29y')).status).toBe(400);
  });

  it("never shows another user's entries, over /api or /v1", async () => {
    const cy = await signIn(sys.gateway.url, 'cy');
    const dee = await signIn(sys.gateway.url, 'dee');
    const cyKey = await createKey(cy, ['read']);
    await untilLogged(cy, ['api_key.created']);
    await untilLogged(dee, ['auth.signed_in']);
    const deeLog = await entries(dee, '?limit=200');
    expect(deeLog.every((e) => e.actor === dee.email)).toBe(true);
    expect(deeLog.map((e) => e.kind)).toEqual(['auth.signed_in']);

    const v1 = await api(sys.gateway.url, cyKey.secret).get('/v1/audit?limit=200');
    expect(v1.status).toBe(200);
    expect(v1.body.entries).toEqual(await entries(cy, '?limit=200'));
    expect(JSON.stringify(v1.body)).not.toContain(dee.email);
    const v1Over = await api(sys.gateway.url, cyKey.secret).get('/v1/audit?limit=500');
    expect(v1Over.status).toBe(400);
    expect(v1Over.body.detail).toBe(ACCOUNT_MESSAGES.auditLimitInvalid);
  });

  it('records the sign-out, and no call or statement changes an entry', async () => {
    const ed = await signIn(sys.gateway.url, 'ed');
    expect((await ed.post('/auth/dev/sign-out')).status).toBe(200);
    const again = await signIn(sys.gateway.url, 'ed-again');
    expect(again.userId).not.toBe(ed.userId);
    await waitFor(
      async () =>
        (
          await db.query(`SELECT 1 FROM integrations.audit_log WHERE user_id = $1 AND kind = 'auth.signed_out'`, [
            ed.userId,
          ])
        ).rowCount === 1,
      10_000,
      100,
      'the sign-out entry',
    );
    for (const method of ['put', 'patch', 'delete'] as const) {
      const res = await (method === 'delete' ? again.delete('/api/audit') : again[method]('/api/audit', { kind: 'x' }));
      expect(res.status).toBe(404);
    }
    await expect(
      db.query(`UPDATE integrations.audit_log SET actor = 'someone else' WHERE user_id = $1`, [ed.userId]),
    ).rejects.toThrow(/append-only/);
  });
});
