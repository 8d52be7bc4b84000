import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express, { type Request, type Response } from 'express';
import { generateKeyPair, SignJWT } from 'jose';
import { AuthFailures } from '../auth-failures.js';
import type { AuthedRequest } from '../auth.types.js';
import { authenticateThenParse } from '../authenticate.middleware.js';
import { TokenVerifier } from '../token-verifier.js';

describe('authenticateThenParse', () => {
  let token: string;
  let verifier: TokenVerifier;
  let middleware: ReturnType<typeof authenticateThenParse>;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    verifier = new TokenVerifier(publicKey, { issuer: 'iss', authorizedParties: [], clockToleranceS: 0, cacheMax: 10 });
    token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer('iss')
      .setSubject('user_a')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    middleware = authenticateThenParse({
      verifier,
      failures: new AuthFailures(30, 30),
      bodyLimit: '1kb',
      preAuthBodyLimit: '1kb',
    });
    const app = express();
    app.use(middleware);
    app.all(
      '/echo',
      (req, res) =>
        void res.json({
          user: (req as AuthedRequest).user?.userId ?? null,
          hasBodyField: 'body' in req,
          body: req.body ?? null,
        }),
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
  });
  afterAll(() => void server?.close());

  /** Runs the middleware on a request with these headers; answers whether it went on in the same turn. */
  function runNow(headers: Record<string, string>): { wentOn: boolean; req: AuthedRequest } {
    const req = { headers, path: '/job-status/j1', method: 'GET', ip: '127.0.0.1' } as unknown as AuthedRequest;
    let wentOn = false;
    middleware(req as Request, {} as Response, () => (wentOn = true));
    return { wentOn, req };
  }

  it('lets a token verified before through in the same turn, and reads no body from a GET without one', async () => {
    const first = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(await first.json()).toEqual({ user: 'user_a', hasBodyField: false, body: null });
    const { wentOn, req } = runNow({ authorization: `Bearer ${token}` });
    expect(wentOn).toBe(true);
    expect(req.user?.userId).toBe('user_a');
    expect('body' in req).toBe(false);
  });

  it('still parses the JSON body of a signed-in caller', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await res.json()).toEqual({ user: 'user_a', hasBodyField: true, body: { a: 1 } });
  });

  it('does not let an unknown token through without verifying it', async () => {
    const { wentOn, req } = runNow({ authorization: 'Bearer not.a.token' });
    expect(wentOn).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(req.user).toBeUndefined();
    expect(req.authError).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
