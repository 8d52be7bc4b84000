import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { INTEGRATIONS_LIMITS, PROBLEM_CONTENT_TYPE, PROBLEMS } from '@bns/contracts';
import { api, startSystem, type ServiceHandle, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser, signIn, type Client } from './helpers.js';

/**
 * API keys and the /v1 API through real gateways, the integrations, jobs, templates and sessions
 * services, NATS and Postgres: keys are shown once and kept as hashes, revocation reaches every
 * gateway replica within a second, a key never works on the web's calls and a sign-in token never on
 * /v1, scopes, another user's ids are 404, idempotency and problem+json.
 */

let sys: System;
let second: ServiceHandle;
let db: pg.Client;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' } },
  });
  // A second gateway replica: revocation must reach both.
  second = await sys.start('gateway', { RATE_LIMIT_BURST: '1000' }, 'gateway-2');
  db = new pg.Client({ connectionString: sys.postgres.url });
  await db.connect();
}, 180_000);

afterAll(async () => {
  await db?.end();
  await second?.stop();
  await sys?.stop();
});

const v1 = (url: string, key: string) => api(url, key);

describe('key lifecycle', () => {
  it('answers the secret once, lists without it and stores only its hash', async () => {
    const alice = await signIn(sys.gateway.url, 'alice');
    const created = await alice.post('/api/keys', { name: 'Shop backend', scopes: ['read', 'messages:send'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Shop backend', scopes: ['read', 'messages:send'] });
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^bns_[A-Za-z0-9_-]{43}$/);
    expect(created.body.prefix).toBe(secret.slice(0, 12));

    const listed = await alice.get('/api/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toHaveLength(1);
    expect(listed.body.keys[0]).toMatchObject({
      id: created.body.id,
      name: 'Shop backend',
      prefix: secret.slice(0, 12),
      lastUsedAt: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    const { rows } = await db.query(`SELECT * FROM integrations.api_keys WHERE id = $1`, [created.body.id]);
    expect(rows[0].secret_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(secret.slice(4));

    // A use is recorded as the last-used time.
    expect((await v1(sys.gateway.url, secret).get('/v1/account')).status).toBe(200);
    await expectEventually(async () => (await alice.get('/api/keys')).body.keys[0].lastUsedAt !== null);
  });

  it('revoking refuses the key on every gateway replica within a second', async () => {
    const bob = await signIn(sys.gateway.url, 'bob');
    const key = await createKey(bob, ['read']);
    // Both replicas have the key in their caches.
    for (const url of [sys.gateway.url, second.url])
      expect((await v1(url, key.secret).get('/v1/templates')).status).toBe(200);
    const revokedAt = Date.now();
    expect((await bob.delete(`/api/keys/${key.id}`)).status).toBe(200);
    for (const url of [sys.gateway.url, second.url]) {
      await expectEventually(async () => (await v1(url, key.secret).get('/v1/templates')).status === 401, 1000);
    }
    expect(Date.now() - revokedAt).toBeLessThan(1500);
    const refused = await v1(second.url, key.secret).get('/v1/templates');
    expect(refused.body.type).toBe(PROBLEMS.unauthorized.type);
    expect((await bob.get('/api/keys')).body.keys).toHaveLength(0);
    expect((await bob.delete(`/api/keys/${key.id}`)).status).toBe(404);
  });

  it(`allows at most ${INTEGRATIONS_LIMITS.apiKeysPerUserMax} live keys`, async () => {
    const carol = await signIn(sys.gateway.url, 'carol');
    for (let i = 0; i < INTEGRATIONS_LIMITS.apiKeysPerUserMax; i++) await createKey(carol, ['read'], `k${i}`);
    const over = await carol.post('/api/keys', { name: 'one too many', scopes: ['read'] });
    expect(over.status).toBe(409);
    const first = (await carol.get('/api/keys')).body.keys[0];
    await carol.delete(`/api/keys/${first.id}`);
    expect((await carol.post('/api/keys', { name: 'after a revoke', scopes: ['read'] })).status).toBe(201);
  });

  it('refuses a bad name or scope in plain words', async () => {
    const dan = await signIn(sys.gateway.url, 'dan');
    const noName = await dan.post('/api/keys', { name: '  ', scopes: ['read'] });
    expect(noName.status).toBe(400);
    expect(noName.body.error).toBe('Give the key a name');
    const badScope = await dan.post('/api/keys', { name: 'x', scopes: ['admin'] });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error).toMatch(/Unknown scope/);
  });
});

describe('where a key works', () => {
  let erin: Client;
  let key: string;
  beforeAll(async () => {
    erin = await signIn(sys.gateway.url, 'erin');
    key = (await createKey(erin, ALL_SCOPES)).secret;
  });

  it.each([
    ['GET', '/api/keys'],
    ['POST', '/api/keys'],
    ['GET', '/api/webhooks'],
    ['POST', '/start-bulk-messages'],
    ['GET', '/api/jobs/USER'],
    ['GET', '/api/templates/USER'],
    ['GET', '/api/sending-policy/USER'],
    ['GET', '/api/dashboard/USER'],
    ['POST', '/dev/simulator/scan'],
    ['GET', '/dev/simulator/outbox'],
  ])('an API key on the web call %s %s is 401', async (method, path) => {
    const res = await fetch(`${sys.gateway.url}${path.replace('USER', erin.userId)}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body:
        method === 'POST'
          ? JSON.stringify({ name: 'x', scopes: ['read'], message: 'hi', phoneNumbers: ['91234567'] })
          : undefined,
    });
    expect(res.status).toBe(401);
  });

  it('a sign-in token on /v1 is 401 problem+json', async () => {
    const res = await api(sys.gateway.url, erin.token).get('/v1/account');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain(PROBLEM_CONTENT_TYPE);
    expect(res.body).toMatchObject({
      type: PROBLEMS.unauthorized.type,
      title: PROBLEMS.unauthorized.title,
      status: 401,
    });
    expect(res.body.detail).toMatch(/API key/);
  });

  it('no key, or a made-up one, is 401 problem+json', async () => {
    for (const token of [undefined, `bns_${'A'.repeat(43)}`]) {
      const res = await api(sys.gateway.url, token).get('/v1/templates');
      expect(res.status).toBe(401);
      expect(res.body.type).toBe(PROBLEMS.unauthorized.type);
    }
  });

  it('the OpenAPI document and the docs need no sign-in and list the /v1 paths', async () => {
    const doc = await fetch(`${sys.gateway.url}/v1/openapi.json`);
    expect(doc.status).toBe(200);
    const body = (await doc.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(body.openapi).toMatch(/^3\.1/);
    for (const path of [
      '/v1/messages',
      '/v1/messages/{id}',
      '/v1/campaigns',
      '/v1/campaigns/{id}',
      '/v1/campaigns/{id}/results',
      '/v1/templates',
      '/v1/account',
      '/v1/opt-outs',
    ]) {
      expect(Object.keys(body.paths)).toContain(path);
    }
    const docs = await fetch(`${sys.gateway.url}/v1/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });
});

describe('scopes', () => {
  it('a read-only key reads but cannot start, send or change', async () => {
    const fay = await signIn(sys.gateway.url, 'fay');
    const key = v1(sys.gateway.url, (await createKey(fay, ['read'])).secret);
    expect((await key.get('/v1/templates')).status).toBe(200);
    expect((await key.get('/v1/campaigns')).status).toBe(200);
    for (const [path, body] of [
      ['/v1/campaigns', { message: 'Hi', phoneNumbers: ['91234567'] }],
      ['/v1/messages', { to: '91234567', text: 'Hi' }],
      ['/v1/opt-outs', { phoneNumbers: ['91234567'] }],
    ] as const) {
      const res = await key.post(path, body);
      expect(res.status).toBe(403);
      expect(res.body.type).toBe(PROBLEMS.insufficientScope.type);
    }
    const writeOnly = v1(sys.gateway.url, (await createKey(fay, ['messages:send'])).secret);
    expect((await writeOnly.get('/v1/templates')).status).toBe(403);
  });
});

describe("another user's ids (BOLA)", () => {
  it("a key of user A against every /v1 path with B's ids is 404", async () => {
    const a = await signIn(sys.gateway.url, 'usera');
    const b = await linkedUser(sys.gateway.url, 'userb');
    const keyA = v1(sys.gateway.url, (await createKey(a, ALL_SCOPES)).secret);
    const keyB = v1(sys.gateway.url, (await createKey(b, ALL_SCOPES)).secret);
    const campaign = await keyB.post('/v1/campaigns', {
      message: 'Hi',
      phoneNumbers: ['91234567', '91234568'],
      startAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(campaign.status).toBe(201);
    const message = await keyB.post('/v1/messages', { to: '91234569', text: 'Your order shipped' });
    expect(message.status).toBe(202);
    await keyB.post('/v1/opt-outs', { phoneNumbers: ['61234567'] });
    const bJob = campaign.body.id as string;
    const bMessage = message.body.id as string;
    expect((await keyB.get(`/v1/campaigns/${bJob}`)).status).toBe(200);

    const attempts: Array<[string, () => Promise<{ status: number; body: any }>]> = [
      ['GET campaign', () => keyA.get(`/v1/campaigns/${bJob}`)],
      ['GET results', () => keyA.get(`/v1/campaigns/${bJob}/results`)],
      ['pause', () => keyA.post(`/v1/campaigns/${bJob}/pause`)],
      ['resume', () => keyA.post(`/v1/campaigns/${bJob}/resume`)],
      ['cancel', () => keyA.post(`/v1/campaigns/${bJob}/cancel`)],
      ['GET message', () => keyA.get(`/v1/messages/${bMessage}`)],
      ['GET message as campaign', () => keyA.get(`/v1/campaigns/${bMessage}`)],
      ['DELETE opt-out', () => keyA.delete('/v1/opt-outs/61234567')],
    ];
    for (const [what, call] of attempts) {
      const res = await call();
      expect([what, res.status]).toEqual([what, 404]);
      expect(res.body.type).toBe(PROBLEMS.notFound.type);
    }
    // Nothing of B's shows in A's lists, and B's campaign is untouched.
    expect((await keyA.get('/v1/campaigns')).body.data).toEqual([]);
    expect((await keyA.get('/v1/opt-outs')).body.data).toEqual([]);
    expect((await keyB.get(`/v1/campaigns/${bJob}`)).body.status).toBe('scheduled');
    expect((await keyB.get('/v1/opt-outs')).body.total).toBe(1);
  });
});

describe('idempotency', () => {
  it('the same key and body answer the same; another body is 409', async () => {
    const gil = await linkedUser(sys.gateway.url, 'gil');
    const key = v1(sys.gateway.url, (await createKey(gil, ALL_SCOPES)).secret);
    const body = {
      message: 'Hello',
      phoneNumbers: ['91234567'],
      startAt: new Date(Date.now() + 3600_000).toISOString(),
    };
    const first = await key.post('/v1/campaigns', body, { 'Idempotency-Key': 'order-1042' });
    expect(first.status).toBe(201);
    const again = await key.post('/v1/campaigns', body, { 'Idempotency-Key': 'order-1042' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await key.get('/v1/campaigns')).body.data).toHaveLength(1);
    const other = await key.post('/v1/campaigns', { ...body, message: 'Other' }, { 'Idempotency-Key': 'order-1042' });
    expect(other.status).toBe(409);
    expect(other.body.type).toBe(PROBLEMS.idempotencyConflict.type);
    const otherPath = await key.post(
      '/v1/opt-outs',
      { phoneNumbers: ['91234567'] },
      { 'Idempotency-Key': 'order-1042' },
    );
    expect(otherPath.status).toBe(409);
  });
});

describe('problem+json on bad input', () => {
  let key: string;
  let url: string;
  beforeAll(async () => {
    const hal = await signIn(sys.gateway.url, 'hal');
    key = (await createKey(hal, ALL_SCOPES)).secret;
    url = sys.gateway.url;
  });

  const send = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body,
    });

  const cases: Array<[string, string, string, string | undefined, Record<string, string>?, number?]> = [
    ['broken JSON', 'POST', '/v1/messages', '{"to":'],
    ['a JSON array', 'POST', '/v1/messages', '[1,2]'],
    ['a JSON string', 'POST', '/v1/messages', '"hello"'],
    ['null', 'POST', '/v1/messages', 'null'],
    ['no recipient', 'POST', '/v1/messages', '{"text":"hi"}'],
    ['neither text nor template', 'POST', '/v1/messages', '{"to":"91234567"}'],
    [
      'text and template',
      'POST',
      '/v1/messages',
      '{"to":"91234567","text":"a","templateId":"00000000-0000-4000-8000-000000000000"}',
    ],
    ['a blank text', 'POST', '/v1/messages', '{"to":"91234567","text":"   "}'],
    ['a too long text', 'POST', '/v1/messages', JSON.stringify({ to: '91234567', text: 'x'.repeat(5000) })],
    ['a NUL in the text', 'POST', '/v1/messages', '{"to":"91234567","text":"a\\u0000b"}'],
    ['a template id that is no uuid', 'POST', '/v1/messages', '{"to":"91234567","templateId":"x"}'],
    ['variables not an object', 'POST', '/v1/messages', '{"to":"91234567","text":"a","variables":[1]}'],
    ['metadata with an object value', 'POST', '/v1/messages', '{"to":"91234567","text":"a","metadata":{"a":{}}}'],
    ['a bad recipient number', 'POST', '/v1/messages', '{"to":"12","text":"a"}'],
    ['a campaign without numbers', 'POST', '/v1/campaigns', '{"message":"hi"}'],
    ['a campaign without a message', 'POST', '/v1/campaigns', '{"phoneNumbers":["91234567"]}'],
    [
      'a campaign with both lists',
      'POST',
      '/v1/campaigns',
      '{"message":"hi","phoneNumbers":["91234567"],"recipients":[{"phone":"91234568"}]}',
    ],
    ['text/plain', 'POST', '/v1/messages', 'to=1', { 'content-type': 'text/plain' }, 415],
    ['too deep', 'POST', '/v1/messages', '['.repeat(200) + ']'.repeat(200)],
    [
      'a bad Idempotency-Key',
      'POST',
      '/v1/opt-outs',
      '{"phoneNumbers":["91234567"]}',
      { 'idempotency-key': 'a'.repeat(300) },
    ],
    ['opt-outs not a list', 'POST', '/v1/opt-outs', '{"phoneNumbers":"91234567"}'],
    ['a bad results filter', 'GET', '/v1/campaigns/x/results?status=nope', undefined],
    ['a bad page size', 'GET', '/v1/campaigns?limit=abc', undefined],
  ];

  it.each(cases)(
    '%s → a 4xx problem with type, title and detail',
    async (_what, method, path, body, headers = {}, status = 400) => {
      const res = await send(method, path, body, headers);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain(PROBLEM_CONTENT_TYPE);
      const problem = (await res.json()) as Record<string, unknown>;
      expect(typeof problem.type).toBe('string');
      expect(typeof problem.title).toBe('string');
      expect(typeof problem.detail).toBe('string');
      expect(JSON.stringify(problem)).not.toMatch(/Unexpected token|at JSON|stack|SyntaxError/);
    },
  );

  it('an unknown path is a 404 problem and a wrong method a 405 problem', async () => {
    expect((await send('GET', '/v1/nothing')).status).toBe(404);
    const wrong = await send('PUT', '/v1/messages', '{}');
    expect(wrong.status).toBe(405);
    expect(((await wrong.json()) as { type: string }).type).toBe(PROBLEMS.methodNotAllowed.type);
  });
});

describe('rate limits', () => {
  it('every answer says the policy and what is left; past it 429 with Retry-After', async () => {
    const tight = await sys.start(
      'gateway',
      { V1_RATE_LIMIT_QUOTA: '5', V1_RATE_LIMIT_WINDOW_S: '60' },
      'gateway-tight',
    );
    try {
      const ivy = await signIn(tight.url, 'ivy');
      const key = v1(tight.url, (await createKey(ivy, ['read'])).secret);
      const first = await key.get('/v1/templates');
      expect(first.headers.get('ratelimit-policy')).toBe('"per-key";q=5;w=60');
      expect(first.headers.get('ratelimit')).toMatch(/^"per-key";r=4;t=\d+$/);
      for (let i = 0; i < 4; i++) await key.get('/v1/templates');
      const refused = await key.get('/v1/templates');
      expect(refused.status).toBe(429);
      expect(refused.body.type).toBe(PROBLEMS.rateLimited.type);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('ratelimit')).toMatch(/r=0/);
    } finally {
      await tight.stop();
    }
  }, 60_000);
});

async function expectEventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
