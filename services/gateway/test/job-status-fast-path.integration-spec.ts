import { randomUUID } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  api,
  devSignIn,
  forgedSignature,
  startService,
  startSystem,
  waitFor,
  type DevSession,
  type ServiceHandle,
  type System,
} from '@bns/testing';
import { linkedUser } from './linked-user.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request of the sequence both gateways get. */
interface Step {
  what: string;
  /** Who asks (undefined: no Authorization header); `forged` sends their token with a broken signature. */
  who?: 'ann' | 'bob';
  forged?: boolean;
  path: string;
  ifNoneMatch?: string;
  /** The answer's status (both gateways'); left out where only the sameness matters. */
  status?: number;
  /** Whether the gateway with the fast path answers it before Express (no route, so no hot-route log line). */
  fast: boolean;
  /** Whether the path is a hot route's at all (logged by the hot routes' log when Express answers it). */
  hot?: boolean;
}

/** Headers the CORS middleware adds to every answer of a gateway with CORS_ORIGINS (no Origin was sent). */
const CORS_ONLY = { vary: 'Origin', 'access-control-allow-credentials': 'true' };
/** A line of the hot routes' log (hotPathLog with SLOW_REQUEST_MS=0: every answer Express gave a job-status poll). */
const routedPoll = (line: string) => line.includes('slow request') && line.includes('/job-status/');

/**
 * The job-status fast path (services/gateway/src/job-status-fast-path/) answers exactly as the plain
 * Nest route would. Two gateways run against the same jobs service, NATS and Postgres: the normal one,
 * and one with CORS_ORIGINS set, which installs no front door, so Nest routes every poll. Both get the
 * same requests, one after the other — polls with and without If-None-Match, unknown and malformed
 * job ids, another user's job, no token, a forged one, a burst past the rate limit — and give the same
 * status, headers (ETag, Cache-Control, Content-Type, Retry-After, the security headers: all of them
 * but Date and the two the CORS middleware adds) and body. The hot routes' log (SLOW_REQUEST_MS=0: a
 * line for every poll Express answers) shows which polls the fast path answered before Express.
 */
describe('job-status fast path: the same answers as the Nest route', () => {
  let sys: System;
  let plain: ServiceHandle;
  const routed = { fast: 0, plain: 0 };
  /** ann and bob on each gateway (each dev gateway signs with a key of its own; the user ids are the same). */
  const users: Record<'fast' | 'plain', Record<'ann' | 'bob', DevSession>> = { fast: {} as never, plain: {} as never };
  const LOGGING = { LOG_LEVEL: 'info', SLOW_REQUEST_MS: '0' };

  const get = (gatewayUrl: string, path: string, headers: Record<string, string>): Promise<Answer> =>
    new Promise((resolve, reject) => {
      request(`${gatewayUrl}${path}`, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      })
        .on('error', reject)
        .end();
    });
  const ask = (
    gateway: 'fast' | 'plain',
    step: Pick<Step, 'who' | 'forged' | 'path' | 'ifNoneMatch'>,
  ): Promise<Answer> => {
    const who = step.who && users[gateway][step.who];
    const token = who && (step.forged ? forgedSignature(who.token) : who.token);
    return get(gateway === 'fast' ? sys.gateway.url : plain.url, step.path, {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(step.ifNoneMatch !== undefined ? { 'if-none-match': step.ifNoneMatch } : {}),
    });
  };
  /** The answer without Date; for the plain gateway, without the CORS middleware's two headers, which it must have. */
  const comparable = (gateway: 'fast' | 'plain', answer: Answer) => {
    const { date: _d, ...headers } = answer.headers;
    if (gateway === 'plain') {
      expect(headers).toMatchObject(CORS_ONLY);
      for (const name of Object.keys(CORS_ONLY)) delete headers[name];
    } else {
      for (const name of Object.keys(CORS_ONLY)) expect(headers[name]).toBeUndefined();
    }
    return { status: answer.status, headers, text: answer.text };
  };

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      services: ['jobs', 'sessions'],
      // Quick receipts: the welcome message's events are over before the polls start.
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: '50',
        SIM_READ_DELAY_MS: '100',
      },
      // The welcome message goes without waiting for the dashboard service (not started here).
      serviceEnv: { gateway: LOGGING, sessions: { AUTO_LOGIN_PREF_TIMEOUT_MS: '50' } },
      onLine: (label, line) => {
        if (label === 'gateway' && routedPoll(line)) routed.fast++;
      },
    });
    plain = await startService('gateway', {
      env: { ...sys.baseEnv, ...LOGGING, CORS_ORIGINS: 'https://elsewhere.test' },
      label: 'gateway-plain',
      onLine: (line) => {
        if (routedPoll(line)) routed.plain++;
      },
    });
    const ann = await linkedUser(sys.gateway.url, 'ann@parity.test');
    users.fast = { ann, bob: await devSignIn(sys.gateway.url, 'bob@parity.test') };
    users.plain = {
      ann: await devSignIn(plain.url, 'ann@parity.test'),
      bob: await devSignIn(plain.url, 'bob@parity.test'),
    };
    expect([users.plain.ann.userId, users.plain.bob.userId]).toEqual([users.fast.ann.userId, users.fast.bob.userId]);
  }, 180_000);

  afterAll(async () => {
    await plain?.stop();
    await sys?.stop();
  });

  /** Waits until the fast gateway answers `step` before Express (no log line), which needs its job id check and its memory. */
  const answeredFast = (step: Pick<Step, 'who' | 'path' | 'ifNoneMatch'>, expected: number) =>
    waitFor(
      async () => {
        const before = routed.fast;
        const answer = await ask('fast', step);
        expect(answer.status).toBe(expected);
        // A routed poll's line is written as its answer finishes: give it a moment to arrive.
        await new Promise((r) => setTimeout(r, 200));
        return routed.fast === before;
      },
      20_000,
      100,
      `the fast path answering ${step.path}`,
    );

  it('answers every poll with the status, headers and body the route gives, and answers the ones it can before Express', async () => {
    const start = await api(sys.gateway.url, users.fast.ann.token).post('/start-bulk-messages', {
      clerkUserId: users.fast.ann.userId,
      message: 'Hi',
      phoneNumbers: ['91230001'],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(start.status).toBe(200);
    const jobId = start.body.jobId as string;
    const own = `/job-status/${jobId}`;
    const etag = (await ask('fast', { who: 'ann', path: own })).headers.etag!;
    expect(etag).toMatch(/^W\/"/);
    // Both gateways learn the version (the route keeps what the jobs service answers), and the fast one
    // checks job ids from the id alone: then it answers revalidations and made-up ids before Express.
    await ask('plain', { who: 'ann', path: own });
    await answeredFast({ who: 'bob', path: `/job-status/${randomUUID()}` }, 404);
    // The start's events (and the welcome message's receipts) forget what was learned: until they are over.
    await answeredFast({ who: 'ann', path: own, ifNoneMatch: etag }, 304);
    await new Promise((r) => setTimeout(r, 1000));
    await answeredFast({ who: 'ann', path: own, ifNoneMatch: etag }, 304);

    const plainBefore = routed.plain;
    const steps: Step[] = [
      { what: 'own job, no validator', who: 'ann', path: own, status: 200, fast: true },
      { what: 'own job, its ETag', who: 'ann', path: own, ifNoneMatch: etag, status: 304, fast: true },
      { what: 'own job, *', who: 'ann', path: own, ifNoneMatch: '*', status: 304, fast: true },
      {
        what: 'own job, a list naming its ETag',
        who: 'ann',
        path: own,
        ifNoneMatch: `W/"AAAAAAAAAAAAAAAAAAAAAA", ${etag}`,
        status: 304,
        fast: true,
      },
      {
        what: 'own job, another ETag',
        who: 'ann',
        path: own,
        ifNoneMatch: 'W/"AAAAAAAAAAAAAAAAAAAAAA"',
        status: 200,
        fast: true,
      },
      {
        what: 'own job, a malformed validator',
        who: 'ann',
        path: own,
        ifNoneMatch: 'garbage',
        status: 200,
        fast: false,
      },
      {
        what: 'own job, upper-case id',
        who: 'ann',
        path: `/job-status/${jobId.toUpperCase()}`,
        status: 200,
        fast: false,
      },
      { what: 'own job with a query', who: 'ann', path: `${own}?x=1`, ifNoneMatch: etag, status: 304, fast: false },
      {
        what: 'own job, percent-encoded id',
        who: 'ann',
        path: `/job-status/${encodeURIComponent(jobId).replace(/-/g, '%2D')}`,
        ifNoneMatch: etag,
        status: 304,
        fast: false,
      },
      { what: 'own job, trailing slash', who: 'ann', path: `${own}/`, ifNoneMatch: etag, fast: false, hot: false },
      { what: 'unknown job id', who: 'ann', path: `/job-status/${randomUUID()}`, status: 404, fast: true },
      {
        what: 'unknown job id, *',
        who: 'ann',
        path: `/job-status/${randomUUID()}`,
        ifNoneMatch: '*',
        status: 404,
        fast: true,
      },
      { what: 'not a job id', who: 'ann', path: '/job-status/not-a-job', status: 404, fast: true },
      { what: 'a very long id', who: 'ann', path: `/job-status/${'a'.repeat(300)}`, status: 404, fast: true },
      { what: "another user's job", who: 'bob', path: own, status: 404, fast: true },
      { what: "another user's job with its ETag", who: 'bob', path: own, ifNoneMatch: etag, status: 404, fast: true },
      { what: 'no token', path: own, ifNoneMatch: etag, status: 401, fast: false },
      { what: 'a forged token', who: 'ann', forged: true, path: own, ifNoneMatch: etag, status: 401, fast: false },
    ];
    /** Asks the fast gateway; true when Express answered (a hot-route log line came), after a moment for the line to arrive. */
    const askFast = async (step: Step): Promise<{ answer: Answer; routed: boolean }> => {
      const before = routed.fast;
      const answer = await ask('fast', step);
      await new Promise((r) => setTimeout(r, 150));
      return { answer, routed: routed.fast > before };
    };
    const byFrontDoor: string[] = [];
    const byRoute: string[] = [];
    for (const step of steps) {
      const before = routed.plain;
      const fast = await askFast(step);
      const plainAnswer = await ask('plain', step);
      const expected = { what: step.what, ...comparable('plain', plainAnswer) };
      expect({ what: step.what, ...comparable('fast', fast.answer) }).toEqual(expected);
      if (step.status !== undefined)
        expect({ what: step.what, status: plainAnswer.status }).toEqual({ what: step.what, status: step.status });
      if (step.hot !== false)
        await waitFor(async () => routed.plain > before, 10_000, 20, `the plain gateway's log line of "${step.what}"`);
      // The front door spends only what this replica already leased of the user's rate limit (5 at a
      // time, for 5 s): a poll that finds the lease spent goes to the route, which leases more. Asked
      // again, it is the front door's, with the same answer.
      let final = fast;
      if (step.fast && fast.routed) {
        final = await askFast(step);
        expect({ what: step.what, ...comparable('fast', final.answer) }).toEqual(expected);
      }
      // A path that is no hot route's (the trailing slash) is not logged either way: the answers' sameness is its test.
      if (step.hot !== false) (final.routed ? byRoute : byFrontDoor).push(step.what);
    }
    await new Promise((r) => setTimeout(r, 150));
    // The plain gateway's route answered every poll of a hot route, and only those.
    expect(routed.plain - plainBefore).toBe(steps.filter((s) => s.hot !== false).length);
    // The fast gateway's front door answered what it can, and nothing else.
    expect({ byFrontDoor, byRoute }).toEqual({
      byFrontDoor: steps.filter((s) => s.fast).map((s) => s.what),
      byRoute: steps.filter((s) => !s.fast && s.hot !== false).map((s) => s.what),
    });
  }, 120_000);

  it("past the user's rate limit, the same 429 with the same Retry-After", async () => {
    const [kim, kimPlain] = [
      await devSignIn(sys.gateway.url, 'kim@parity.test'),
      await devSignIn(plain.url, 'kim@parity.test'),
    ];
    users.fast.bob = kim;
    users.plain.bob = kimPlain;
    await answeredFast({ who: 'bob', path: `/job-status/${randomUUID()}` }, 404);
    // The budget is the user's, shared by every replica: spent here, it is spent there too.
    // The bucket refills a token every fraction of a second: on a slow machine one may come back between
    // the two asks, so the pair is asked again (the budget spent again) until both fell in the same window.
    let fast: Answer | undefined;
    let byRoute: Answer | undefined;
    for (let attempt = 0; attempt < 5 && !(fast?.status === 429 && byRoute?.status === 429); attempt++) {
      let last: Answer | undefined;
      for (let i = 0; i < 400 && last?.status !== 429; i++)
        last = await ask('fast', { who: 'bob', path: `/job-status/${randomUUID()}` });
      expect(last?.status).toBe(429);
      const path = `/job-status/${randomUUID()}`;
      [fast, byRoute] = await Promise.all([ask('fast', { who: 'bob', path }), ask('plain', { who: 'bob', path })]);
    }
    if (!fast || !byRoute) throw new Error('no answers');
    expect(comparable('fast', fast)).toEqual(comparable('plain', byRoute));
    expect(fast.status).toBe(429);
    expect(fast.headers['retry-after']).toMatch(/^\d+$/);
  }, 60_000);
});
