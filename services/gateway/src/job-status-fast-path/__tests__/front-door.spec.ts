import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { JOB_MESSAGES, jobStatusEtag } from '@bns/contracts';
import { jobMayExist, mintJobId } from '@bns/service-kit';
import { FrontDoor } from '../front-door.js';

const key = randomBytes(32);
const TOKEN = 'token-of-ann';
const USER = 'user_ann';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

/**
 * The front door on a real HTTP server whose own listener (Express's stand-in) answers 599: what the
 * door answers, it answers itself, with the checks the routes make; all else reaches the listener.
 */
describe('FrontDoor', () => {
  let server: Server;
  let url: string;
  let leases = 0;
  let reached = 0;
  const mine = mintJobId(key, USER);
  const V1 = 'AAAAAAAAAAAAAAAAAAAAA1';
  const V0 = 'AAAAAAAAAAAAAAAAAAAAA0';
  const versions = new Map([[mine, V1]]);
  /** A second job of Ann's whose whole answer the cache kept for its current version. */
  const kept = mintJobId(key, USER);
  const V2 = 'AAAAAAAAAAAAAAAAAAAAA2';
  const KEPT_BODY = Buffer.from(`{"success":true,"job":{"jobId":"${kept}","status":"running"}}`);
  versions.set(kept, V2);

  beforeAll(async () => {
    server = createServer((_req, res) => {
      reached++;
      res.statusCode = 599;
      res.end();
    });
    new FrontDoor({
      verifier: { cached: (token) => (token === TOKEN ? ({ userId: USER } as never) : undefined) },
      limiter: { spendLeased: () => (leases > 0 ? (leases--, true) : false) },
      statusCache: {
        version: (userId, jobId) => (userId === USER ? versions.get(jobId) : undefined),
        answer: (userId, jobId) => (userId === USER && jobId === kept ? { version: V2, body: KEPT_BODY } : undefined),
      },
      ids: { mayExist: (userId, jobId) => jobMayExist({ key, legacyIds: false }, userId, jobId) },
      headers: [['X-Frame-Options', 'DENY']],
      tracing: false,
    }).install(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ask = (path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(
        `${url}${path}`,
        { method, headers: { authorization: `Bearer ${TOKEN}`, ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it("answers 404 for an id that names no job of the user, with the jobs service's body, spending one lease", async () => {
    for (const jobId of [randomUUID(), mintJobId(key, 'user_bob'), 'not-a-job']) {
      leases = 1;
      const before = reached;
      const answer = await ask(`/job-status/${jobId}`);
      expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({
        status: 404,
        body: { success: false, code: 'JOB_NOT_FOUND', error: JOB_MESSAGES.jobNotFound },
      });
      expect(answer.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'cache-control': 'private, no-cache',
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(answer.text)),
      });
      expect([leases, reached]).toEqual([0, before]);
    }
  });

  it('answers 304 for a revalidation of the version it holds', async () => {
    leases = 1;
    const answer = await ask(`/job-status/${mine}`, { 'if-none-match': jobStatusEtag(V1) });
    expect({ status: answer.status, etag: answer.headers.etag, text: answer.text }).toEqual({
      status: 304,
      etag: jobStatusEtag(V1),
      text: '',
    });
    expect(leases).toBe(0);
  });

  it('answers 200 with the whole answer kept for the current version, without a validator or with an older one', async () => {
    for (const headers of [
      {},
      { 'if-none-match': jobStatusEtag(V0) },
      { 'if-none-match': `W/"x", ${jobStatusEtag(V1)}` },
    ]) {
      leases = 1;
      const before = reached;
      const answer = await ask(`/job-status/${kept}`, headers);
      expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: KEPT_BODY.toString() });
      expect(answer.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'cache-control': 'private, no-cache',
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(KEPT_BODY.length),
        etag: jobStatusEtag(V2),
      });
      expect([leases, reached]).toEqual([0, before]);
    }
    // Its current version: the 304, not the body.
    leases = 1;
    expect((await ask(`/job-status/${kept}`, { 'if-none-match': jobStatusEtag(V2) })).status).toBe(304);
    // A malformed validator, or no lease left: the route's.
    leases = 1;
    expect((await ask(`/job-status/${kept}`, { 'if-none-match': 'garbage' })).status).toBe(599);
    expect(leases).toBe(1);
    leases = 0;
    expect((await ask(`/job-status/${kept}`)).status).toBe(599);
  });

  it('says which requests it answers from memory whatever the lease (load shedding holds those to its hard bound only)', () => {
    const door = new FrontDoor({
      verifier: { cached: (token) => (token === TOKEN ? ({ userId: USER } as never) : undefined) },
      limiter: { spendLeased: () => false },
      statusCache: {
        version: (userId, jobId) => (userId === USER ? versions.get(jobId) : undefined),
        answer: (userId, jobId) => (userId === USER && jobId === kept ? { version: V2, body: KEPT_BODY } : undefined),
      },
      ids: { mayExist: (userId, jobId) => jobMayExist({ key, legacyIds: false }, userId, jobId) },
      headers: [],
      tracing: false,
    });
    const req = (url: string, headers: Record<string, string> = {}, method = 'GET') =>
      ({ method, url, headers: { authorization: `Bearer ${TOKEN}`, ...headers } }) as never;
    expect(door.answersFromMemory(req(`/job-status/${randomUUID()}`))).toBe(true);
    expect(door.answersFromMemory(req(`/job-status/${mine}`, { 'if-none-match': jobStatusEtag(V1) }))).toBe(true);
    expect(door.answersFromMemory(req(`/job-status/${kept}`))).toBe(true);
    expect(door.answersFromMemory(req(`/job-status/${mine}`))).toBe(false);
    expect(door.answersFromMemory(req(`/job-status/${kept}`, { 'if-none-match': 'garbage' }))).toBe(false);
    expect(door.answersFromMemory(req(`/job-status/${kept}`, { authorization: 'Bearer someone-else' }))).toBe(false);
    expect(door.answersFromMemory(req(`/job-status/${kept}`, {}, 'POST'))).toBe(false);
    expect(door.answersFromMemory(req(`/job-logs/${kept}`))).toBe(false);
  });

  it('passes on, unanswered and uncharged, what it cannot answer as the route would', async () => {
    const unknown = randomUUID();
    const passed: [string, Record<string, string>, string?][] = [
      [`/job-status/${mine}`, {}], // the user's own job, no validator, its answer not kept: the jobs service's
      [`/job-status/${mine}`, { 'if-none-match': jobStatusEtag(V0) }], // a version it does not hold, no answer kept
      [`/job-status/${unknown}`, { authorization: 'Bearer someone-else' }], // a token it has not verified
      [`/job-status/${unknown}`, { authorization: '' }],
      [`/job-status/${unknown}?x=1`, {}], // a query
      [`/job-status/${unknown.replace('-', '%2D')}`, {}], // an encoded path
      [`/job-logs/${unknown}`, {}],
    ];
    for (const [path, headers] of passed) {
      leases = 1;
      const before = reached;
      expect({ path, status: (await ask(path, headers)).status }).toEqual({ path, status: 599 });
      expect({ path, leases, reached: reached - before }).toEqual({ path, leases: 1, reached: 1 });
    }
    // A body or another method: the routes'.
    leases = 1;
    expect(
      (await ask(`/job-status/${unknown}`, { 'content-type': 'application/json', 'content-length': '2' }, 'GET', '{}'))
        .status,
    ).toBe(599);
    expect((await ask(`/job-status/${unknown}`, {}, 'POST')).status).toBe(599);
    // No lease left: the route's rate limit decides (a 429 or a fresh lease), not the door.
    leases = 0;
    expect((await ask(`/job-status/${unknown}`)).status).toBe(599);
    expect((await ask(`/job-status/${mine}`, { 'if-none-match': jobStatusEtag(V1) })).status).toBe(599);
  });
});
