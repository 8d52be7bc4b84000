import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { MESSAGES } from '@bns/contracts';
import {
  api,
  createTestIssuer,
  devSignIn,
  startService,
  startSystem,
  unsignedToken,
  waitFor,
  type System,
  type TestIssuer,
} from '@bns/testing';

const AZP = 'https://app.shop.test';
const ZERO_STATS = { total_templates: 0, favorite_templates: 0, categories: 0, total_usage: 0 };

/** The production path: Clerk-shaped tokens verified with a PEM key, issuer and azp checks. */
describe('gateway auth (Clerk mode)', () => {
  let sys: System;
  let issuer: TestIssuer;
  let url: string;
  const now = () => Math.floor(Date.now() / 1000);
  const stats = (token: string | undefined, userId = 'user_alice') =>
    api(url, token).get(`/api/templates/${userId}/stats`);

  beforeAll(async () => {
    issuer = await createTestIssuer('https://clerk.shop.test');
    sys = await startSystem({
      services: ['templates'],
      serviceEnv: {
        gateway: {
          AUTH_MODE: 'clerk',
          CLERK_ISSUER: issuer.issuer,
          CLERK_JWT_KEY: issuer.publicKeyPem,
          CLERK_AUTHORIZED_PARTIES: `${AZP},https://other-allowed.test`,
        },
      },
    });
    url = sys.gateway.url;
  });
  afterAll(() => sys?.stop());

  it('answers the first slice (browser → gateway → NATS → templates → Postgres) with zeros for a new user', async () => {
    const res = await stats(await issuer.sign({ sub: 'user_alice', azp: AZP, sid: 'sess_1' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, stats: ZERO_STATS });
  });

  it('says on /readyz which issuer and key source tokens are verified against (no key material)', async () => {
    const res = await fetch(`${url}/readyz`);
    const body = (await res.json()) as { checks: { name: string; ok: boolean; detail?: unknown }[] };
    const auth = body.checks.find((c) => c.name === 'auth');
    expect(auth).toMatchObject({
      ok: true,
      detail: {
        mode: 'clerk',
        issuer: issuer.issuer,
        keySource: 'CLERK_JWT_KEY (PEM public key, networkless)',
        authorizedParties: [AZP, 'https://other-allowed.test'],
      },
    });
    expect(JSON.stringify(body)).not.toContain('BEGIN PUBLIC KEY');
  });

  it('serves the public config without a token: support e-mail by default, no donation link unless configured', async () => {
    const res = await api(url).get('/api/config');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      donationUrl: null,
      supportEmail: 'support@business-notification.app',
      whatsappEngine: 'simulated',
    });
  });

  it('refuses a request without a token, or with a malformed one, with 401', async () => {
    for (const res of [
      await stats(undefined),
      await stats('not-a-jwt'),
      await api(url).get('/api/templates/user_alice/stats', { authorization: 'Basic abc' }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, error: 'unauthorized' });
    }
  });

  it('refuses expired, not-yet-valid, wrong-issuer, wrong-azp, missing-azp and alg:none tokens with 401', async () => {
    const bad = [
      await issuer.sign({ sub: 'user_alice', azp: AZP, iat: now() - 120 }, { expiresIn: now() - 30 }),
      await issuer.sign({ sub: 'user_alice', azp: AZP }, { notBefore: now() + 60 }),
      await issuer.sign({ sub: 'user_alice', azp: AZP, iss: 'https://evil.example' }),
      await issuer.sign({ sub: 'user_alice', azp: 'https://evil.example' }),
      await issuer.sign({ sub: 'user_alice' }),
      unsignedToken({ sub: 'user_alice', azp: AZP, iss: issuer.issuer, exp: now() + 300, iat: now() }),
    ];
    for (const token of bad) expect((await stats(token)).status).toBe(401);
  });

  it('allows the 5 s clock tolerance but no more', async () => {
    expect(
      (await stats(await issuer.sign({ sub: 'user_alice', azp: AZP, iat: now() - 60 }, { expiresIn: now() - 2 })))
        .status,
    ).toBe(200);
    expect(
      (await stats(await issuer.sign({ sub: 'user_alice', azp: AZP, iat: now() - 60 }, { expiresIn: now() - 10 })))
        .status,
    ).toBe(401);
  });

  it('refuses a token signed by a different key even when its claims look right', async () => {
    const impostor = await createTestIssuer(issuer.issuer);
    expect((await stats(await impostor.sign({ sub: 'user_alice', azp: AZP }))).status).toBe(401);
  });

  it("answers 403 for another user's path", async () => {
    const res = await stats(await issuer.sign({ sub: 'user_alice', azp: AZP }), 'user_bob');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
  });

  it('has no dev routes when dev mode is off', async () => {
    expect((await api(url).post('/auth/dev/sign-in', { email: 'a@b.hk' })).status).toBe(404);
    expect((await api(url).get('/auth/dev/.well-known/jwks.json')).status).toBe(404);
  });

  it('refuses a socket handshake without a valid token with connect_error "unauthorized"', async () => {
    const refused = await new Promise<string>((resolve) => {
      const socket = io(url, { auth: { token: 'nope' }, transports: ['websocket'], reconnection: false });
      socket.on('connect_error', (err) => {
        socket.close();
        resolve(err.message);
      });
      socket.on('connect', () => {
        socket.close();
        resolve('connected');
      });
    });
    expect(refused).toBe('unauthorized');
    const token = await issuer.sign({ sub: 'user_alice', azp: AZP });
    const accepted = await new Promise<string>((resolve) => {
      const socket = io(url, { auth: { token }, transports: ['polling', 'websocket'], reconnection: false });
      socket.on('connect', () => {
        socket.close();
        resolve('connected');
      });
      socket.on('connect_error', (err) => resolve(err.message));
    });
    expect(accepted).toBe('connected');
  });
});

describe('gateway dev auth, limits and docs', () => {
  let sys: System;
  let url: string;

  beforeAll(async () => {
    sys = await startSystem({
      services: ['templates'],
      serviceEnv: {
        gateway: { RATE_LIMIT_BURST: '20', RATE_LIMIT_PER_SECOND: '1', BODY_LIMIT: '2kb', PRE_AUTH_BODY_LIMIT: '2kb' },
      },
    });
    url = sys.gateway.url;
  });
  afterAll(() => sys?.stop());

  it('signs in with an e-mail; the same e-mail is always the same user', async () => {
    const a = await devSignIn(url, 'Owner@Shop.HK', 'Ann');
    const b = await devSignIn(url, 'owner@shop.hk');
    expect(a.userId).toBe(b.userId);
    expect(a).toMatchObject({ email: 'owner@shop.hk', firstName: 'Ann' });
    expect((await api(url, a.token).get(`/api/templates/${a.userId}/stats`)).body).toEqual({
      success: true,
      stats: ZERO_STATS,
    });
    const bad = await api(url).post('/auth/dev/sign-in', { email: 'not an email' });
    expect(bad.status).toBe(400);
  });

  it("a dev sign-out refuses that sign-in's token on every gateway replica and closes its sockets; the user's other sign-ins go on", async () => {
    // Two replicas sharing one dev key, as the chart runs them.
    const env = {
      ...sys.baseEnv,
      AUTH_MODE: 'dev',
      DEV_ISSUER_KEY_FILE: join(mkdtempSync(join(tmpdir(), 'bns-dev-key-')), 'key.json'),
    };
    const a = await startService('gateway', { env });
    const b = await startService('gateway', { env });
    const sockets: Socket[] = [];
    const connect = (gatewayUrl: string, token: string) =>
      new Promise<{ socket: Socket; outcome: string }>((resolve) => {
        const socket = io(gatewayUrl, { auth: { token }, transports: ['websocket'], reconnection: false });
        sockets.push(socket);
        socket.on('connect', () => resolve({ socket, outcome: 'connected' }));
        socket.on('connect_error', (err) => resolve({ socket, outcome: err.message }));
      });
    try {
      const leaving = await devSignIn(a.url, 'leaver@shop.hk');
      const staying = await devSignIn(b.url, 'leaver@shop.hk'); // the same user signed in on another device
      expect(staying.userId).toBe(leaving.userId);
      const stats = (gatewayUrl: string, token?: string) =>
        api(gatewayUrl, token).get(`/api/templates/${leaving.userId}/stats`);
      // Both replicas know the token (and keep its claims) before the sign-out.
      expect((await stats(a.url, leaving.token)).status).toBe(200);
      expect((await stats(b.url, leaving.token)).status).toBe(200);
      const open = await connect(b.url, leaving.token);
      expect(open.outcome).toBe('connected');
      const closed = new Promise<string>((resolve) => open.socket.on('disconnect', (reason) => resolve(reason)));

      // Without a token there is nothing to sign out.
      expect((await api(a.url).post('/auth/dev/sign-out')).status).toBe(401);
      const out = await api(a.url, leaving.token).post('/auth/dev/sign-out');
      expect({ status: out.status, body: out.body }).toEqual({ status: 200, body: { success: true } });

      const refused = await stats(a.url, leaving.token);
      expect({ status: refused.status, error: refused.body.error }).toEqual({
        status: 401,
        error: MESSAGES.unauthorized,
      });
      // The other replica hears it over NATS: refused there too, and the socket open there is closed.
      await waitFor(
        async () => (await stats(b.url, leaving.token)).status === 401 || undefined,
        5000,
        50,
        'refused on the other replica',
      );
      expect(await closed).toBe('io server disconnect');
      expect((await connect(b.url, leaving.token)).outcome).toBe('unauthorized');
      expect((await connect(a.url, leaving.token)).outcome).toBe('unauthorized');

      // The sign-in on the other device is untouched, on both replicas.
      expect((await stats(a.url, staying.token)).status).toBe(200);
      expect((await stats(b.url, staying.token)).status).toBe(200);
      expect((await connect(a.url, staying.token)).outcome).toBe('connected');
    } finally {
      for (const s of sockets) s.close();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('refuses a dev token at a gateway with another key (another issuer instance)', async () => {
    const other = await startService('gateway', { env: { ...sys.baseEnv, AUTH_MODE: 'dev' } });
    try {
      const mine = await devSignIn(url, 'x@shop.hk');
      expect((await api(other.url, mine.token).get(`/api/templates/${mine.userId}/stats`)).status).toBe(401);
    } finally {
      await other.stop();
    }
  });

  it('limits each user: past the burst, 429 with Retry-After; other users are unaffected', async () => {
    const a = await devSignIn(url, 'busy@shop.hk');
    const b = await devSignIn(url, 'calm@shop.hk');
    const codes: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 25; i++) {
      const res = await api(url, a.token).get(`/api/templates/${a.userId}/stats`);
      codes.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
    }
    expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(20);
    expect(codes.filter((c) => c === 200).length).toBeLessThan(25);
    expect(codes).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await api(url, b.token).get(`/api/templates/${b.userId}/stats`)).status).toBe(200);
  });

  it('answers 413 for a JSON body over the limit and 400 for bad JSON, never 500', async () => {
    const big = await api(url).post('/auth/dev/sign-in', { email: `${'x'.repeat(4000)}@shop.hk` });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    const broken = await api(url).post('/auth/dev/sign-in', '{"email": ');
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ success: false });
  });

  it('describes its HTTP surface at /api/docs-json and serves the docs page', async () => {
    const doc = (await api(url).get('/api/docs-json')).body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toContain('/api/templates/{userId}/stats');
    const page = await fetch(`${url}/api/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger');
  });
});
