import { randomUUID } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io, type Socket } from 'socket.io-client';
import { JOB_MESSAGES, SOCKET, SOCKET_EVENTS, type JobView } from '@bns/contracts';
import {
  api,
  devSignIn,
  forgedSignature,
  revalidationsAnswered,
  simulatorInbound,
  sleep,
  startService,
  startSystem,
  waitFor,
  type DevSession,
  type ServiceHandle,
  type System,
} from '@bns/testing';
import { linkedUser } from './linked-user.js';

/** A number the simulated phone says is not on WhatsApp: its send fails. */
const NOT_ON_WHATSAPP = '60000002';
const SEND_DELAY_MS = 1500;

interface Answer {
  status: number;
  etag: string | undefined;
  cacheControl: string | undefined;
  contentType: string | undefined;
  text: string;
}

/**
 * `GET /job-status/{jobId}` revalidation against the real gateway, jobs, sessions
 * (simulated WhatsApp), NATS and Postgres: the ETag is the job's version, an unchanged job is a 304
 * without its lists, every change the answer shows is a new ETag, and no other user learns anything.
 */
describe('job-status ETag / 304', () => {
  let sys: System;
  let ann: DevSession;
  let bob: DevSession;
  let cat: DevSession;

  /** A GET as a browser revalidates its cached copy: plain If-None-Match (fetch() would add Cache-Control: no-cache). */
  const get = (who: DevSession, jobId: string, ifNoneMatch?: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${who.token}`,
        ...(ifNoneMatch !== undefined ? { 'if-none-match': ifNoneMatch } : {}),
      };
      request(`${sys.gateway.url}/job-status/${jobId}`, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            etag: res.headers.etag,
            cacheControl: res.headers['cache-control'],
            contentType: res.headers['content-type'],
            text,
          }),
        );
      })
        .on('error', reject)
        .end();
    });
  const revalidations = () => revalidationsAnswered(sys.gateway.metricsUrl);
  /** Requests the gateway limited on its own bucket because the shared store (NATS KV) did not answer in time. */
  const localDecisions = async () => {
    const text = await (await fetch(sys.gateway.metricsUrl)).text();
    return Number(/^bns_gateway_rate_limit_local_decisions_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const jobOf = (a: Answer): JobView => (JSON.parse(a.text) as { job: JobView }).job;
  const start = async (who: DevSession, body: Record<string, unknown>): Promise<string> => {
    const res = await api(sys.gateway.url, who.token).post('/start-bulk-messages', {
      clerkUserId: who.userId,
      message: 'Hi',
      ...body,
    });
    if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.jobId as string;
  };

  /** A user whose (simulated) WhatsApp is linked, so they can start jobs. */
  const linked = (email: string): Promise<DevSession> => linkedUser(sys.gateway.url, email);

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      services: ['jobs', 'sessions'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_FAIL_NUMBERS: NOT_ON_WHATSAPP,
        SIM_DELIVERED_DELAY_MS: '100',
        SIM_READ_DELAY_MS: '200',
      },
      serviceEnv: { jobs: { SEND_DELAY_MS: String(SEND_DELAY_MS), OPT_OUTS_ACK_WAIT_MS: '1000' } },
    });
    [ann, bob, cat] = await Promise.all([
      linked('ann@etag.test'),
      devSignIn(sys.gateway.url, 'bob@etag.test'),
      linked('cat@etag.test'),
    ]);
  }, 180_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it('a stable job: 200 with an ETag, then 304 with no body on it; other and bad validators are a 200; other users a 404', async () => {
    const jobId = await start(ann, {
      phoneNumbers: ['91230001'],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const first = await get(ann, jobId);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
    expect(first.cacheControl).toBe('private, no-cache');
    expect(jobOf(first)).toMatchObject({ jobId, status: 'scheduled', progress: { total: 1, sent: 0, failed: 0 } });
    const etag = first.etag!;

    for (const validator of [etag, etag.slice(2), `W/"AAAAAAAAAAAAAAAAAAAAAA", ${etag}`, '*']) {
      const again = await get(ann, jobId, validator);
      expect({ validator, status: again.status, text: again.text, etag: again.etag }).toEqual({
        validator,
        status: 304,
        text: '',
        etag,
      });
      expect(again.cacheControl).toBe('private, no-cache');
      expect(again.contentType).toBeUndefined();
    }

    // Absent, foreign, malformed and oversized validators: the whole answer, never an error.
    const huge = `${etag}, ${'x'.repeat(8000)}`;
    for (const validator of [
      'W/"AAAAAAAAAAAAAAAAAAAAAA"',
      'W/"1f-Zm9vYmFy"',
      'garbage',
      `"${'a'.repeat(22)}`,
      `${etag} ${etag}`,
      huge,
      Array.from({ length: 60 }, () => etag).join(', '),
    ]) {
      const full = await get(ann, jobId, validator);
      expect({ validator: validator.slice(0, 40), status: full.status, etag: full.etag }).toEqual({
        validator: validator.slice(0, 40),
        status: 200,
        etag,
      });
      expect(full.text).toBe(first.text);
    }

    // Another user's job is not found, whatever they claim to have: the very answer of a job that does
    // not exist, so neither a 304 nor anything else tells them it does.
    const missing = '00000000-0000-4000-8000-000000000000';
    const nowhere = await get(bob, missing);
    expect(nowhere.status).toBe(404);
    expect(JSON.parse(nowhere.text)).toMatchObject({ success: false, error: JOB_MESSAGES.jobNotFound });
    for (const validator of [undefined, etag, '*']) {
      for (const [id, answer] of [
        [jobId, await get(bob, jobId, validator)],
        [missing, await get(bob, missing, validator)],
      ] as const) {
        expect({ id, status: answer.status, etag: answer.etag, text: answer.text }).toEqual({
          id,
          status: 404,
          etag: nowhere.etag,
          text: nowhere.text,
        });
      }
    }

    // Paused, it is another answer; resumed to what it was, the same answer and so the same ETag.
    expect((await api(sys.gateway.url, ann.token).post(`/pause-job/${jobId}`)).status).toBe(200);
    const paused = await get(ann, jobId, etag);
    expect(paused.status).toBe(200);
    expect(paused.etag).not.toBe(etag);
    expect(jobOf(paused)).toMatchObject({ status: 'paused', pausedReason: 'user' });
    expect((await api(sys.gateway.url, ann.token).post(`/resume-job/${jobId}`)).status).toBe(200);
    expect((await get(ann, jobId, paused.etag)).status).toBe(200);
    expect((await get(ann, jobId, etag)).status).toBe(304);

    // Cancelled: a new ETag and the new answer, then 304 on that one.
    expect((await api(sys.gateway.url, ann.token).post(`/cancel-job/${jobId}`)).status).toBe(200);
    const cancelled = await get(ann, jobId, etag);
    expect(cancelled.status).toBe(200);
    expect(cancelled.etag).not.toBe(etag);
    expect(jobOf(cancelled)).toMatchObject({ status: 'cancelled', finishedAt: expect.any(String) });
    expect((await get(ann, jobId, cancelled.etag)).status).toBe(304);
  });

  it('a running job: every send, failure and skip is a new ETag; a 304 only while the answer is the one the client has', async () => {
    const sent = '91230011';
    const stopping = '91230013';
    // Cat's account, not Ann's: Ann's lane sleeps until her scheduled job's start, and a new start does not wake it (LaneRepository.activate).
    const jobId = await start(cat, { phoneNumbers: [sent, NOT_ON_WHATSAPP, stopping] });
    const first = await get(cat, jobId);
    expect(first.status).toBe(200);
    // Before its turn, the third recipient opts out: the job skips it.
    await simulatorInbound(sys.gateway.url, cat.token, stopping, 'STOP');

    // Poll like the web app: each time with the ETag of the copy it has. After every 304 a plain GET
    // checks the copy is really current: the same ETag must be the same answer.
    let copy = first;
    const etags = new Set([first.etag]);
    let notModified = 0;
    const deadline = Date.now() + 60_000;
    while (jobOf(copy).status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`the job did not complete: ${copy.text}`);
      await sleep(100);
      const answer = await get(cat, jobId, copy.etag);
      if (answer.status === 304) {
        notModified++;
        expect(answer.etag).toBe(copy.etag);
        const plain = await get(cat, jobId);
        if (plain.etag === copy.etag) expect(plain.text).toBe(copy.text);
        continue;
      }
      expect(answer.status).toBe(200);
      expect(answer.etag).not.toBe(copy.etag);
      expect(answer.text).not.toBe(copy.text);
      etags.add(answer.etag);
      copy = answer;
    }

    const done = jobOf(copy);
    expect(done.progress).toEqual({ total: 3, sent: 1, failed: 1, skipped: 1 });
    expect(done.results.successList.map((s) => s.originalNumber)).toEqual([sent]);
    expect(done.results.failedList.map((f) => f.phoneNumber)).toEqual([NOT_ON_WHATSAPP]);
    expect(done.results.skippedList).toEqual([expect.objectContaining({ phoneNumber: stopping, reason: 'opted_out' })]);
    // Queued or running, the send, the failure, the skip and the end each showed as a new ETag.
    expect(etags.size).toBeGreaterThanOrEqual(4);
    expect(notModified).toBeGreaterThan(0);
    // The first copy is long stale.
    const stale = await get(cat, jobId, first.etag);
    expect(stale.status).toBe(200);
    expect(stale.etag).toBe(copy.etag);

    // Receipts and replies are the report's (job-results), not the status answer's: they change neither the body nor the ETag.
    await waitFor(
      async () => {
        const page = await api(sys.gateway.url, cat.token).get(`/job-results/${jobId}`);
        return (
          page.body.results?.find(
            (r: { phoneNumber: string; readAt: string | null }) => r.phoneNumber === sent && r.readAt,
          ) ?? undefined
        );
      },
      20_000,
      100,
      'the read receipt',
    );
    await simulatorInbound(sys.gateway.url, cat.token, sent, 'Thanks!');
    await waitFor(
      async () => {
        const page = await api(sys.gateway.url, cat.token).get(`/job-results/${jobId}`);
        return (
          page.body.results?.find(
            (r: { phoneNumber: string; repliedAt: string | null }) => r.phoneNumber === sent && r.repliedAt,
          ) ?? undefined
        );
      },
      20_000,
      100,
      'the reply',
    );
    expect((await get(cat, jobId, copy.etag)).status).toBe(304);
    expect((await get(cat, jobId)).text).toBe(copy.text);
  }, 120_000);
  it("revalidating an unchanged job is a 304 from the gateway's memory; an event of the user, or a change through the gateway, sends the next poll to the jobs service", async () => {
    const dan = await linked('dan@etag.test');
    const jobId = await start(dan, {
      phoneNumbers: ['91230021'],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const etag = (await get(dan, jobId)).etag!;
    // The first revalidation asks the jobs service, and the gateway learns the version from its answer.
    expect((await get(dan, jobId, etag)).status).toBe(304);
    const before = await revalidations();
    for (let i = 0; i < 5; i++) {
      const again = await get(dan, jobId, etag);
      expect({ status: again.status, etag: again.etag, text: again.text, cacheControl: again.cacheControl }).toEqual({
        status: 304,
        etag,
        text: '',
        cacheControl: 'private, no-cache',
      });
    }
    const learned = await revalidations();
    expect(learned).toEqual({ memory: before.memory + 5, jobs: before.jobs });

    // Never for another user: Bob naming Dan's job and ETag is a 404, from the id alone (it is not Bob's).
    await idsChecked(bob);
    const foreign = await get(bob, jobId, etag);
    expect(foreign.status).toBe(404);
    expect(await revalidations()).toEqual(learned);

    // An event of Dan's (an inbound message): once the gateway has passed it on, the next revalidation
    // asks the jobs service again (a 304 still: the job did not change), and the one after is memory's.
    const socket: Socket = io(sys.gateway.url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token: dan.token },
      reconnection: false,
      forceNew: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
      const heard = new Promise((resolve) => socket.once(SOCKET_EVENTS.messageReceived, resolve));
      await simulatorInbound(sys.gateway.url, dan.token, '91230029', 'hello');
      await heard;
    } finally {
      socket.close();
    }
    const afterEvent = await revalidations();
    expect((await get(dan, jobId, etag)).status).toBe(304);
    expect(await revalidations()).toEqual({ memory: afterEvent.memory, jobs: afterEvent.jobs + 1 });
    expect((await get(dan, jobId, etag)).status).toBe(304);
    expect(await revalidations()).toEqual({ memory: afterEvent.memory + 1, jobs: afterEvent.jobs + 1 });

    // A cancel through the gateway shows on the very next poll, whenever its event arrives.
    expect((await api(sys.gateway.url, dan.token).post(`/cancel-job/${jobId}`)).status).toBe(200);
    const cancelled = await get(dan, jobId, etag);
    expect(cancelled.status).toBe(200);
    expect(jobOf(cancelled)).toMatchObject({ status: 'cancelled' });
  }, 60_000);

  /** Answers "not found" the gateway gave from a job id alone (JobIdCheck), without asking the jobs service. */
  const refusedById = async (metricsUrl = sys.gateway.metricsUrl) =>
    Number(
      /^bns_gateway_job_ids_refused_total(?:\{[^}]*\})? (\d+)/m.exec(
        await (await fetch(`${metricsUrl}/metrics`)).text(),
      )?.[1] ?? 0,
    );
  /** The gateway's NATS requests whose labels include `label` (`outcome="…"`, `subject="…"`), summed over the others. */
  const rpcRequests = async (label: string, metricsUrl = sys.gateway.metricsUrl) => {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('bns_rpc_client_requests_total{') && l.includes(label))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };
  /** `not_found` answers the gateway had from the jobs service, over every subject. */
  const notFoundAsked = () => rpcRequests('outcome="not_found"');
  /** Until the gateway has the jobs service's id scheme, an id is passed on: wait for it to answer from ids. */
  const idsChecked = (who: DevSession, gateway: ServiceHandle = sys.gateway) =>
    waitFor(
      async () => {
        const before = await refusedById(gateway.metricsUrl);
        await fetch(`${gateway.url}/job-status/${randomUUID()}`, { headers: { authorization: `Bearer ${who.token}` } });
        return (await refusedById(gateway.metricsUrl)) > before;
      },
      15_000,
      100,
      'the gateway checking job ids',
    );

  it("a job id that names no job of the user (made up, another user's, not a UUID) is a 404 from the id alone: the jobs service is never asked", async () => {
    const ivy = await linked('ivy@etag.test');
    const foreignJob = await start(cat, {
      phoneNumbers: ['91230041'],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(foreignJob).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await idsChecked(ivy);
    const [asked, refused] = [await notFoundAsked(), await refusedById()];
    const ids = [randomUUID(), foreignJob, foreignJob.toUpperCase(), 'not-a-job'];
    for (const jobId of ids) {
      for (const ifNoneMatch of [undefined, '*', '"x"']) {
        const answer = await get(ivy, jobId, ifNoneMatch);
        expect({ jobId, status: answer.status, body: JSON.parse(answer.text) }).toEqual({
          jobId,
          status: 404,
          body: { success: false, code: 'JOB_NOT_FOUND', error: JOB_MESSAGES.jobNotFound },
        });
      }
    }
    // The other calls that name a job: the same 404, and the job is untouched.
    const calls: [string, 'get' | 'post'][] = [
      [`/job-logs/${foreignJob}`, 'get'],
      [`/cancel-job/${foreignJob}`, 'post'],
      [`/pause-job/${foreignJob}`, 'post'],
      [`/resume-job/${foreignJob}`, 'post'],
    ];
    for (const [path, method] of calls) {
      const res = await api(sys.gateway.url, ivy.token)[method](path);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: 'JOB_NOT_FOUND' });
    }
    expect(await notFoundAsked()).toBe(asked);
    expect(await refusedById()).toBe(refused + ids.length * 3 + calls.length);
    // A bad `since` is still the jobs service's own refusal, first.
    expect((await api(sys.gateway.url, ivy.token).get(`/job-logs/${foreignJob}?since=yesterday`)).body.code).toBe(
      'JOB_SINCE_INVALID',
    );
    // The owner is not affected, in either case of the id: Cat's poll is the jobs service's 200.
    for (const jobId of [foreignJob, foreignJob.toUpperCase()])
      expect(jobOf(await get(cat, jobId))).toMatchObject({ jobId: foreignJob, status: 'scheduled' });
  }, 60_000);

  /** The whole answer, every header included. */
  const raw = (
    who: DevSession,
    jobId: string,
    ifNoneMatch: string | undefined,
    { gatewayUrl = sys.gateway.url, origin, query = '' }: { gatewayUrl?: string; origin?: string; query?: string } = {},
  ): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> =>
    new Promise((resolve, reject) => {
      const headers = {
        authorization: `Bearer ${who.token}`,
        ...(ifNoneMatch !== undefined ? { 'if-none-match': ifNoneMatch } : {}),
        ...(origin ? { origin } : {}),
      };
      request(`${gatewayUrl}/job-status/${jobId}${query}`, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      })
        .on('error', reject)
        .end();
    });
  /** `bns_http_requests_total` of the job-status route's answers of a status. */
  const routeAnswered = async (status: number) => {
    const text = await (await fetch(`${sys.gateway.metricsUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('bns_http_requests_total{') &&
          ['method="GET"', 'route="/job-status/:jobId"', `status="${status}"`].every((label) => l.includes(label)),
      );
    return Number(line?.split(' ').at(-1) ?? 0);
  };
  const routeNotModified = () => routeAnswered(304);
  /** A stable job of a new linked user, its ETag, and a revalidation already answered from memory. */
  const settled = async (email: string) => {
    const who = await linked(email);
    const jobId = await start(who, {
      phoneNumbers: ['91230031'],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const etag = (await get(who, jobId)).etag!;
    await waitFor(
      async () => {
        const before = await revalidations();
        expect((await get(who, jobId, etag)).status).toBe(304);
        return (await revalidations()).memory === before.memory + 1;
      },
      10_000,
      100,
      'a revalidation answered from memory',
    );
    return { who, jobId, etag };
  };

  it("a 304 from the gateway's memory (answered before Express) is the route's 304: status, every header, the metric series", async () => {
    const { who: eve, jobId, etag } = await settled('eve@etag.test');
    // With a query the front door passes the poll on: the route answers it (from memory too).
    const [before, counted] = [await revalidations(), await routeNotModified()];
    const byRoute = await raw(eve, jobId, etag, { query: '?x=1' });
    const fromMemory = await raw(eve, jobId, etag);
    expect(await revalidations()).toEqual({ memory: before.memory + 2, jobs: before.jobs });
    expect(await routeNotModified()).toBe(counted + 2);

    const { date: _routeDate, ...routeHeaders } = byRoute.headers;
    const { date: _memoryDate, ...memoryHeaders } = fromMemory.headers;
    expect({ status: fromMemory.status, text: fromMemory.text }).toEqual({ status: 304, text: '' });
    expect({ status: byRoute.status, text: byRoute.text }).toEqual({ status: 304, text: '' });
    expect(memoryHeaders).toEqual(routeHeaders);
    expect(memoryHeaders).toMatchObject({
      etag,
      'cache-control': 'private, no-cache',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    });
    expect(memoryHeaders['content-security-policy']).toContain("frame-ancestors 'none'");

    // What the front door does not answer goes to the route unchanged: an encoded id, a query, another user.
    for (const path of [`/job-status/${jobId}?x=1`, `/job-status/${encodeURIComponent(jobId).replace(/-/g, '%2D')}`]) {
      const again = await fetch(`${sys.gateway.url}${path}`, {
        headers: { authorization: `Bearer ${eve.token}`, 'if-none-match': etag },
      });
      expect({ path, status: again.status }).toEqual({ path, status: 304 });
    }
    expect((await raw(bob, jobId, etag)).status).toBe(404);
    expect((await raw({ ...eve, token: forgedSignature(eve.token) }, jobId, etag)).status).toBe(401);
  }, 60_000);

  it("a 404 from the id alone before Express is the route's 404: status, every header, the body, the metric series", async () => {
    const hal = await devSignIn(sys.gateway.url, 'hal@etag.test');
    await idsChecked(hal);
    const jobId = randomUUID();
    const [counted, refused, asked] = [await routeAnswered(404), await refusedById(), await notFoundAsked()];
    const byRoute = await raw(hal, jobId, undefined, { query: '?x=1' });
    const byFrontDoor = await raw(hal, jobId, undefined);
    const revalidating = await raw(hal, jobId, '*');
    expect([await routeAnswered(404), await refusedById(), await notFoundAsked()]).toEqual([
      counted + 3,
      refused + 3,
      asked,
    ]);
    const { date: _routeDate, ...routeHeaders } = byRoute.headers;
    for (const answer of [byFrontDoor, revalidating]) {
      const { date: _date, ...headers } = answer.headers;
      expect({ status: answer.status, text: answer.text }).toEqual({ status: byRoute.status, text: byRoute.text });
      expect(headers).toEqual(routeHeaders);
    }
    expect(byRoute.status).toBe(404);
    expect(JSON.parse(byRoute.text)).toEqual({
      success: false,
      code: 'JOB_NOT_FOUND',
      error: JOB_MESSAGES.jobNotFound,
    });
    expect(routeHeaders).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    });
    // Still behind the token check.
    expect((await raw({ ...hal, token: forgedSignature(hal.token) }, jobId, undefined)).status).toBe(401);
  }, 60_000);

  it("polls of ids that name no job spend the user's rate limit like any request: past it, the route's 429", async () => {
    const kim = await devSignIn(sys.gateway.url, 'kim@etag.test');
    await idsChecked(kim);
    const statuses: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 15; i++) statuses.push((await raw(kim, randomUUID(), undefined)).status);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const notFound = statuses.filter((s) => s === 404).length;
    expect(notFound + statuses.filter((s) => s === 429).length).toBe(300);
    expect(notFound).toBeLessThanOrEqual(120 + Math.ceil(10 * seconds) + 5);
    expect(notFound).toBeLessThan(300);
  }, 60_000);

  it("revalidations from memory spend the user's rate limit like any request: past it, the route's 429", async () => {
    const { who: fay, jobId, etag } = await settled('fay@etag.test');
    const before = await revalidations();
    const localBefore = await localDecisions();
    const statuses: number[] = [];
    const t0 = performance.now();
    // 300 back to back, 20 at a time: more than the burst (120) and what 10/s earns back meanwhile.
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 15; i++) statuses.push((await raw(fay, jobId, etag)).status);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const notModified = statuses.filter((s) => s === 304).length;
    const limited = statuses.filter((s) => s === 429).length;
    expect(notModified + limited).toBe(300);
    expect(limited).toBeGreaterThan(0);
    // At most the burst, what the seconds earned back, and one lease (5) per replica; and one burst
    // more when the shared store did not answer within its time-out meanwhile (a loaded machine): the
    // replica then limits on its own bucket, which starts full, as the limiter's design allows.
    const storeAway = (await localDecisions()) > localBefore;
    expect(notModified).toBeLessThanOrEqual(120 + Math.ceil(10 * seconds) + 5 + (storeAway ? 120 : 0));
    expect((await revalidations()).memory).toBeGreaterThan(before.memory);
  }, 60_000);

  it('with CORS_ORIGINS set, a revalidation from memory carries the CORS headers the routes set', async () => {
    const origin = 'https://app.shop.test';
    const cors = await startService('gateway', {
      env: { ...sys.baseEnv, CORS_ORIGINS: origin },
      label: 'gateway-cors',
    });
    try {
      const { who, jobId, etag } = await settled('gus@etag.test');
      // Each dev-mode gateway signs with a key of its own: the same user signs in there.
      const gus = await devSignIn(cors.url, 'gus@etag.test');
      expect(gus.userId).toBe(who.userId);
      const ask = () => raw(gus, jobId, etag, { gatewayUrl: cors.url, origin });
      await ask(); // this replica learns the version
      let answer: Awaited<ReturnType<typeof ask>> | undefined;
      await waitFor(
        async () => {
          const before = await revalidationsAnswered(cors.metricsUrl);
          answer = await ask();
          return (await revalidationsAnswered(cors.metricsUrl)).memory === before.memory + 1;
        },
        10_000,
        100,
        'a revalidation answered from memory',
      );
      expect({ status: answer!.status, ...answer!.headers }).toMatchObject({
        status: 304,
        etag,
        'access-control-allow-origin': origin,
        'access-control-allow-credentials': 'true',
        'cache-control': 'private, no-cache',
      });
    } finally {
      await cors.stop();
    }
  }, 60_000);
  it('a poller keeps its 304s from memory past JOB_STATUS_CACHE_MS: its entry is refreshed from the jobs service behind its polls, not re-asked on them', async () => {
    const ttlMs = 2000;
    const short = await startService('gateway', {
      env: { ...sys.baseEnv, JOB_STATUS_CACHE_MS: String(ttlMs) },
      label: 'gateway-refresh',
    });
    try {
      const { who, jobId, etag } = await settled('ida@etag.test');
      const ida = await devSignIn(short.url, 'ida@etag.test');
      expect(ida.userId).toBe(who.userId);
      const statusAsked = () => rpcRequests('subject="jobs.status"', short.metricsUrl);
      expect((await raw(ida, jobId, etag, { gatewayUrl: short.url })).status).toBe(304); // this replica learns the version
      const [before, askedBefore] = [await revalidationsAnswered(short.metricsUrl), await statusAsked()];
      // Three lifetimes of polls every 50 ms: without the refresh, each lifetime's end would send a poll to the jobs service.
      const statuses = new Set<number>();
      let polls = 0;
      for (const until = Date.now() + 3 * ttlMs; Date.now() < until; polls++) {
        statuses.add((await raw(ida, jobId, etag, { gatewayUrl: short.url })).status);
        await sleep(50);
      }
      const after = await revalidationsAnswered(short.metricsUrl);
      const refreshes = (await statusAsked()) - askedBefore - (after.jobs - before.jobs);
      expect([...statuses]).toEqual([304]);
      // One poll may land between a refresh and its answer on a loaded machine, and be asked inline.
      expect(after.jobs - before.jobs).toBeLessThanOrEqual(1);
      expect(after.memory - before.memory).toBeGreaterThanOrEqual(polls - 1);
      // One refresh every 50–80% of a lifetime: at least two in three lifetimes.
      expect(refreshes).toBeGreaterThanOrEqual(2);
      expect(refreshes).toBeLessThanOrEqual(7);
    } finally {
      await short.stop();
    }
  }, 60_000);
});
