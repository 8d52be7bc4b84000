import { randomUUID } from 'node:crypto';
import { get } from 'node:http';
import { connect, type Socket as TcpSocket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { io, type Socket } from 'socket.io-client';
import {
  api,
  createTestIssuer,
  devSignIn,
  simulatorScan,
  sleep,
  startService,
  startSystem,
  waitFor,
  type ServiceHandle,
  type System,
  type TestIssuer,
} from '@bns/testing';

const AZP = 'https://app.shop.test';

/** Opens a socket; resolves with it once connected, or with the connect_error message. */
function openSocket(
  url: string,
  token: string,
  extra: { extraHeaders?: Record<string, string> } = {},
): Promise<Socket | string> {
  return new Promise((resolve) => {
    const socket = io(url, { auth: { token }, transports: ['websocket'], reconnection: false, ...extra });
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (err) => {
      socket.close();
      resolve(err.message);
    });
  });
}

/**
 * The gateway as an attacker meets it: headers, auth before bodies, failed-auth and per-user limits
 * shared across replicas, proxy headers, socket origins and limits, dev-only routes, logs.
 */
describe('gateway hardening', () => {
  let sys: System;
  let issuer: TestIssuer;
  const extra: ServiceHandle[] = [];
  const lines = new Map<string, string[]>();
  const scratch = mkdtempSync(join(tmpdir(), 'bns-gw-hardening-'));

  /** Another gateway on the same system, with its own settings (and its log lines kept). */
  const gateway = async (env: Record<string, string>, label = `gw-${extra.length}`) => {
    lines.set(label, []);
    const g = await startService('gateway', {
      env: { ...sys.baseEnv, ...env },
      label,
      onLine: (l) => lines.get(label)!.push(l),
    });
    extra.push(g);
    return g;
  };
  const clerkEnv = () => ({
    AUTH_MODE: 'clerk',
    CLERK_ISSUER: issuer.issuer,
    CLERK_JWT_KEY: issuer.publicKeyPem,
    CLERK_AUTHORIZED_PARTIES: AZP,
    AUTH_CLOCK_TOLERANCE_S: '0',
  });

  beforeAll(async () => {
    issuer = await createTestIssuer('https://clerk.shop.test');
    sys = await startSystem({ services: ['templates', 'jobs', 'sessions'], shards: 1 });
  });
  afterAll(async () => {
    await Promise.all(extra.map((g) => g.stop()));
    await sys?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('sends security headers on the app page and the API, and no-store on authenticated JSON', async () => {
    const url = sys.gateway.url;
    const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    const me = await devSignIn(url, 'headers@shop.hk');
    const json = await api(url, me.token).get(`/api/templates/${me.userId}/stats`);
    for (const headers of [page.headers, json.headers]) {
      const csp = headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toContain('unsafe-inline');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('referrer-policy')).toBeTruthy();
      expect(headers.get('x-powered-by')).toBeNull();
    }
    expect(json.headers.get('cache-control')).toBe('no-store');
    // No-store answers get no ETag hashed from their body (job-status sets the jobs service's own).
    expect(json.headers.get('etag')).toBeNull();
  });

  it('answers an unchanged job-status with 304 on its ETag', async () => {
    const url = sys.gateway.url;
    const me = await devSignIn(url, 'etag@shop.hk');
    const socket = (await openSocket(url, me.token)) as Socket;
    const ready = new Promise((resolve) => socket.once('ready', resolve));
    socket.emit('createSession', { id: me.userId, clerkUserId: me.userId, isExplicitRequest: true });
    await simulatorScan(url, me.token);
    await ready;
    socket.close();
    const started = await api(url, me.token).post('/start-bulk-messages', {
      message: 'Hi',
      phoneNumbers: ['91234567'],
      clientId: 'c',
      clerkUserId: me.userId,
    });
    expect(started.status).toBe(200);
    const first = await waitFor(
      async () => {
        const res = await api(url, me.token).get(`/job-status/${started.body.jobId}`);
        return res.body.job.status === 'completed' ? res : undefined;
      },
      20_000,
      200,
      'the job to complete',
    );
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    // As a browser revalidates its cached copy (fetch() would add `Cache-Control: no-cache`, which forbids a 304).
    const again = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      get(
        `${url}/job-status/${started.body.jobId}`,
        { headers: { authorization: `Bearer ${me.token}`, 'if-none-match': etag! } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        },
      ).on('error', reject);
    });
    expect(again).toEqual({ status: 304, body: '' });
  });

  it('authenticates before reading a body: broken JSON without a token is 401, a big anonymous sign-in body 413', async () => {
    const url = sys.gateway.url;
    const broken = await api(url).post('/start-bulk-messages', '{"message": ');
    expect(broken.status).toBe(401);
    const big = await api(url).post('/auth/dev/sign-in', { email: 'a@shop.hk', firstName: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    // A signed-in caller may still send a large body (BODY_LIMIT).
    const me = await devSignIn(url, 'big@shop.hk');
    const large = await api(url, me.token).post('/api/templates/' + me.userId, {
      name: 'n',
      message_content: 'm',
      description: 'd'.repeat(30_000),
    });
    expect(large.status).not.toBe(413);
  });

  it('limits failed authentications per client address with 429 + Retry-After', async () => {
    const g = await gateway({ AUTH_FAIL_BURST: '5', AUTH_FAIL_PER_MINUTE: '6' });
    const codes: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await api(g.url, `bad.token.${i}`).get('/api/templates/user_x/stats');
      codes.push(res.status);
      retryAfter ??= res.headers.get('retry-after');
    }
    expect(codes.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(codes.slice(5)).toEqual([429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Missing tokens count too, and socket handshakes from that address are refused as well.
    expect((await api(g.url).get('/api/templates/user_x/stats')).status).toBe(429);
    expect(await openSocket(g.url, 'bad')).toBe('too many failed sign-ins, try again later');
    // Failures from a shared address never lock out its signed-in users: a valid token still gets
    // through, on HTTP and on the socket (live updates) alike.
    const me = await devSignIn(g.url, 'behind-the-same-nat@shop.hk');
    expect((await api(g.url, me.token).get(`/api/templates/${me.userId}/stats`)).status).toBe(200);
    const live = await openSocket(g.url, me.token);
    expect(typeof live).not.toBe('string');
    (live as Socket).close();
    expect(await openSocket(g.url, 'bad again')).toBe('too many failed sign-ins, try again later');
  });

  it('does not trust X-Forwarded-For unless TRUST_PROXY says so', async () => {
    const g = await gateway({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '1' });
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      codes.push(
        (
          await api(g.url).post(
            '/auth/dev/sign-in',
            { email: `p${i}@shop.hk` },
            { 'x-forwarded-for': `203.0.113.${i}` },
          )
        ).status,
      );
    }
    expect(codes).toContain(429);
    const trusting = await gateway({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '1', TRUST_PROXY: '1' });
    const behindProxy: number[] = [];
    for (let i = 0; i < 6; i++) {
      behindProxy.push(
        (
          await api(trusting.url).post(
            '/auth/dev/sign-in',
            { email: `q${i}@shop.hk` },
            { 'x-forwarded-for': `198.51.100.${i}` },
          )
        ).status,
      );
    }
    expect(behindProxy).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('shares the per-user rate limit across gateway replicas (NATS KV)', async () => {
    // Both replicas sign with one key, as replicas behind a load balancer would.
    const env = {
      RATE_LIMIT_BURST: '10',
      RATE_LIMIT_PER_SECOND: '1',
      DEV_ISSUER_KEY_FILE: join(scratch, 'shared-key.json'),
    };
    const a = await gateway(env);
    const b = await gateway(env);
    const me = await devSignIn(a.url, 'shared@shop.hk');
    const codes: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 20; i++) {
      const res = await api(i % 2 === 0 ? a.url : b.url, me.token).get(`/api/templates/${me.userId}/stats`);
      codes.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
    }
    const ok = codes.filter((c) => c === 200).length;
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(ok).toBeLessThanOrEqual(12);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('applies CORS_ORIGINS to socket.io: another Origin is refused and never echoed', async () => {
    const g = await gateway({ CORS_ORIGINS: AZP });
    const handshake = (origin: string) => fetch(`${g.url}/socket.io/?EIO=4&transport=polling`, { headers: { origin } });
    const evil = await handshake('https://evil.example');
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    expect(evil.status).toBeGreaterThanOrEqual(400);
    const allowed = await handshake(AZP);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(AZP);
    const me = await devSignIn(g.url, 'origin@shop.hk');
    const ws = await openSocket(g.url, me.token, { extraHeaders: { origin: 'https://evil.example' } });
    expect(typeof ws).toBe('string');
  });

  it('caps sockets per user and rate-limits client events', async () => {
    const g = await gateway({ SOCKETS_PER_USER: '3', SOCKET_EVENTS_BURST: '3', SOCKET_EVENTS_PER_SECOND: '1' });
    const me = await devSignIn(g.url, 'sockets@shop.hk');
    const sockets = [
      await openSocket(g.url, me.token),
      await openSocket(g.url, me.token),
      await openSocket(g.url, me.token),
    ];
    expect(sockets.every((s) => typeof s !== 'string')).toBe(true);
    expect(await openSocket(g.url, me.token)).toBe('too many connections for this user');
    const first = sockets[0] as Socket;
    const acks = await Promise.all(
      Array.from({ length: 6 }, () =>
        first
          .timeout(2000)
          .emitWithAck('connected', {})
          .catch(() => 'timeout'),
      ),
    );
    expect(acks.filter((a) => (a as { success?: boolean }).success === true).length).toBe(3);
    expect(acks.filter((a) => (a as { code?: string }).code === 'RATE_LIMITED').length).toBe(3);
    // A closed socket frees its place.
    first.close();
    await waitFor(
      async () => {
        const s = await openSocket(g.url, me.token);
        if (typeof s === 'string') return false;
        s.close();
        return true;
      },
      5000,
      100,
      'a free socket place',
    );
    for (const s of sockets) if (typeof s !== 'string') s.close();
  });

  it('closes a socket when its token expires; a fresh token reconnects', async () => {
    const g = await gateway(clerkEnv());
    const now = Math.floor(Date.now() / 1000);
    const short = await issuer.sign({ sub: 'user_expiring', azp: AZP, iat: now }, { expiresIn: now + 2 });
    const socket = await openSocket(g.url, short);
    expect(typeof socket).not.toBe('string');
    const reason = await new Promise<string>((resolve) => (socket as Socket).once('disconnect', resolve));
    expect(reason).toBe('io server disconnect');
    const fresh = await openSocket(g.url, await issuer.sign({ sub: 'user_expiring', azp: AZP }));
    expect(typeof fresh).not.toBe('string');
    (fresh as Socket).close();
  }, 20_000);

  it('has /dev/simulator only in dev auth mode with the simulated engine', async () => {
    const clerk = await gateway(clerkEnv());
    const token = await issuer.sign({ sub: 'user_clerk', azp: AZP });
    for (const path of ['/dev/simulator/scan', '/dev/simulator/disconnect'])
      expect((await api(clerk.url, token).post(path)).status).toBe(404);
    expect((await api(clerk.url, token).get('/dev/simulator/outbox')).status).toBe(404);
    const webjs = await gateway({ WA_ENGINE: 'webjs' });
    const me = await devSignIn(webjs.url, 'webjs@shop.hk');
    expect((await api(webjs.url, me.token).get('/dev/simulator/outbox')).status).toBe(404);
    const dev = await devSignIn(sys.gateway.url, 'sim@shop.hk');
    expect((await api(sys.gateway.url, dev.token).get('/dev/simulator/outbox')).status).toBe(200);
  });

  it('keeps the dev issuer key in DEV_ISSUER_KEY_FILE: tokens survive a gateway restart (same kid)', async () => {
    const keyFile = join(scratch, 'keys', 'dev-issuer-key.json');
    const first = await gateway({ DEV_ISSUER_KEY_FILE: keyFile });
    const me = await devSignIn(first.url, 'restart@shop.hk');
    const kid = (await api(first.url).get('/auth/dev/.well-known/jwks.json')).body.keys[0].kid;
    await first.stop();
    const second = await gateway({ DEV_ISSUER_KEY_FILE: keyFile });
    expect((await api(second.url).get('/auth/dev/.well-known/jwks.json')).body.keys[0].kid).toBe(kid);
    expect((await api(second.url, me.token).get(`/api/templates/${me.userId}/stats`)).status).toBe(200);
  });

  it('serves static files only for non-API paths', async () => {
    const dist = join(scratch, 'dist');
    mkdirSync(join(dist, 'job-status'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(dist, 'job-status', 'abc'), 'a file');
    writeFileSync(join(dist, 'logo.txt'), 'logo');
    const g = await gateway({ WEB_DIST: dist });
    expect((await fetch(`${g.url}/logo.txt`)).status).toBe(200);
    expect((await fetch(`${g.url}/job-status/abc`)).status).toBe(401);
  });

  it('sheds load with 503 + Retry-After past SHED_MAX_IN_FLIGHT', async () => {
    const g = await gateway({ SHED_MAX_IN_FLIGHT: '2', RATE_LIMIT_BURST: '1000' });
    // Many callers at once (one caller alone is held to its share with 429 before anyone is shed).
    const callers = [];
    for (let i = 0; i < 10; i++) callers.push(await devSignIn(g.url, `shed-${i}@shop.hk`));
    const all = await Promise.all(
      callers.flatMap((me) =>
        Array.from({ length: 4 }, () => api(g.url, me.token).get(`/api/templates/${me.userId}/stats`)),
      ),
    );
    const shed = all.filter((r) => r.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    expect(shed[0]!.headers.get('retry-after')).toBe('1');
    expect(shed[0]!.body).toMatchObject({ success: false, code: 'OVERLOADED' });
    expect(all.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
  });

  it('cuts its in-flight limit while Postgres stalls the service behind it, refusing new requests in milliseconds instead of queueing them, and opens it again after', async () => {
    const g = await gateway({
      SHED_READS_MAX_IN_FLIGHT: '200',
      SHED_READS_MIN_IN_FLIGHT: '4',
      SHED_TARGET_MS: '50',
      RATE_LIMIT_BURST: '1000000',
      RATE_LIMIT_PER_SECOND: '100000',
    });
    const me = await devSignIn(g.url, 'stall@shop.hk');
    const other = await devSignIn(g.url, 'stall-other@shop.hk');
    const gauge = async (name: string) =>
      Number(
        new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(
          await (await fetch(`${g.metricsUrl}/metrics`)).text(),
        )?.[1],
      );
    // One caller per stalled request: a caller holding more than its share of a cut limit gets 429.
    const stallers = [];
    for (let i = 0; i < 20; i++) stallers.push(await devSignIn(g.url, `stall-${i}@shop.hk`));
    const stats = async (who = me) => {
      const t = performance.now();
      const res = await api(g.url, who.token).get(`/api/templates/${who.userId}/stats`);
      return { status: res.status, code: (res.body as { code?: string }).code, ms: performance.now() - t };
    };
    expect(await gauge('bns_gateway_shed_read_limit')).toBe(200);
    // A lock stalls every templates query: the requests wait behind the templates service.
    const db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    await db.query('BEGIN');
    await db.query('LOCK TABLE templates.templates IN ACCESS EXCLUSIVE MODE');
    const stalled = stallers.map((who) => stats(who));
    try {
      // The 20 reach the gateway within a few seconds even on a loaded machine (15 s: a test run beside others).
      await waitFor(
        async () => (await gauge('bns_gateway_requests_in_flight')) === 20,
        15_000,
        20,
        '20 requests in progress',
      );
      // Nothing comes back, and they wait past the target: the limit falls to the floor.
      await waitFor(
        async () => (await gauge('bns_gateway_shed_read_limit')) === 4,
        5_000,
        20,
        'the limit cut to SHED_READS_MIN_IN_FLIGHT',
      );
      const refused = await stats(other);
      expect(refused).toMatchObject({ status: 503, code: 'OVERLOADED' });
      expect(refused.ms).toBeLessThan(500);
    } finally {
      await db.query('COMMIT');
      await db.end();
    }
    // The stall ended: what waited is answered, and the limit grows back to the hard bound.
    expect((await Promise.all(stalled)).map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    await waitFor(
      async () => (await gauge('bns_gateway_shed_read_limit')) === 200,
      20_000,
      100,
      'the limit back at SHED_READS_MAX_IN_FLIGHT',
    );
    expect((await stats()).status).toBe(200);
  });

  it('queues a burst of new connections while busy (LISTEN_BACKLOG) instead of dropping them for a SYN retry a second later', async () => {
    // Node's default backlog (511) drops the connections past it; 700 at once is what a busy gateway
    // met in gateway-pollers' overload phase. Stopped, the gateway accepts nothing: only the kernel's
    // queue holds them.
    const g = await gateway({}, 'backlog');
    const pid = g.process.pid!;
    const burst = 700;
    const sockets: TcpSocket[] = [];
    process.kill(pid, 'SIGSTOP');
    try {
      const connected = await Promise.all(
        Array.from(
          { length: burst },
          () =>
            new Promise<boolean>((resolve) => {
              const socket = connect(g.port, '127.0.0.1');
              sockets.push(socket);
              const timer = setTimeout(() => resolve(false), 3000);
              socket.once('connect', () => {
                clearTimeout(timer);
                resolve(true);
              });
              socket.once('error', () => resolve(false));
            }),
        ),
      );
      expect(connected.filter((ok) => !ok).length).toBe(0);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Once it runs again, every queued connection is served.
    const statuses = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let answer = '';
            socket.setEncoding('utf8');
            socket.on('data', (chunk: string) => (answer += chunk));
            socket.once('close', () => resolve(answer.split('\r\n')[0] ?? ''));
            socket.once('error', () => resolve('error'));
            socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
          }),
      ),
    );
    expect(statuses.filter((s) => s !== 'HTTP/1.1 200 OK')).toEqual([]);
  });

  it('logs no line per successful request at info, and never a ?token= value', async () => {
    const quiet = await gateway({ LOG_LEVEL: 'info' }, 'quiet');
    const me = await devSignIn(quiet.url, 'logs@shop.hk');
    for (let i = 0; i < 5; i++)
      expect((await api(quiet.url, me.token).get(`/api/templates/${me.userId}/stats`)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await api(quiet.url, me.token).get(`/job-status/${randomUUID()}`)).status).toBe(404);
    const loud = await gateway({ LOG_LEVEL: 'debug' }, 'loud');
    await api(loud.url, me.token).get(`/api/templates/${me.userId}/stats?token=SECRET-QUERY-TOKEN&x=1`);
    await api(loud.url).get('/api/templates/u/stats?access_token=SECRET-QUERY-TOKEN');
    await sleep(300);
    expect(lines.get('quiet')!.filter((l) => l.includes('"req":'))).toEqual([]);
    const loudLines = lines.get('loud')!;
    expect(loudLines.some((l) => l.includes('/stats?token=[redacted]&x=1'))).toBe(true);
    expect(loudLines.join('\n')).not.toContain('SECRET-QUERY-TOKEN');
  });
});
