import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startNats, startService, type Nats, type ServiceHandle } from '@bns/testing';

const BODY = Buffer.alloc(Math.round(4.9 * 1024 * 1024), 'a');
const CHUNK = 64 * 1024;

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
}

/**
 * Uploads BODY in chunks, as a client on a real network does, so that the gateway answers while the
 * body is still arriving; resolves with the answer, or the socket error the client saw instead.
 */
function upload(url: string, path: string, headers: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    let outcome: Outcome = {};
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(BODY.length), ...headers },
      },
      (res) => {
        outcome = { status: res.statusCode, connection: res.headers.connection };
        res.resume();
        res.on('end', () => resolve(outcome));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ...outcome, error: err.code ?? err.message }));
    let offset = 0;
    const write = () => {
      while (offset < BODY.length) {
        const chunk = BODY.subarray(offset, offset + CHUNK);
        offset += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/** Refused requests answer with their status and `Connection: close`, never a reset, however big their body. */
describe('refusals of large uploads', () => {
  let nats: Nats;
  let gateway: ServiceHandle;
  beforeAll(async () => {
    nats = await startNats();
    gateway = await startService('gateway', {
      env: { NATS_URL: nats.url, AUTH_MODE: 'dev', WA_ENGINE: 'simulated', SESSIONS_SHARDS: '1' },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await nats?.stop();
  });

  it('answers 40 unauthenticated 4.9 MB uploads at once with 401 or 429 and Connection: close, none reset', async () => {
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => upload(gateway.url, '/start-bulk-messages')));
    expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
    for (const o of outcomes) {
      expect([401, 429]).toContain(o.status);
      expect(o.connection).toBe('close');
    }
    // The failed-auth limit took over past its burst: both refusals were seen.
    expect(outcomes.some((o) => o.status === 401)).toBe(true);
  });

  it('answers a body over the limit with 413 and Connection: close, not a reset', async () => {
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => upload(gateway.url, '/auth/dev/sign-in')));
    expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
    for (const o of outcomes) {
      expect(o.status).toBe(413);
      expect(o.connection).toBe('close');
    }
  });
});
