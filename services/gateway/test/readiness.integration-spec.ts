import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSystem, waitFor, type System } from '@bns/testing';

interface Ready {
  status: string;
  checks: { name: string; ok: boolean }[];
}
const readyz = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Ready };
};

describe('gateway /readyz', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ shards: 2 });
  });
  afterAll(() => sys?.stop());

  it('is 200 when every service and every sessions shard answers a ping, and lists them', async () => {
    const { status, body } = await readyz(sys.gateway.url);
    expect(status).toBe(200);
    expect(body.checks.map((c) => c.name).sort()).toEqual([
      'auth',
      'contacts',
      'dashboard',
      'integrations',
      'jobs',
      'nats',
      'sessions-0',
      'sessions-1',
      'templates',
    ]);
    expect(body.checks.every((c) => c.ok)).toBe(true);
    // Which service answered, not what: no instance (host, pid) or version of any service is public.
    const services = body.checks.filter((c) => c.name !== 'auth' && c.name !== 'nats') as Array<{
      name: string;
      detail?: unknown;
    }>;
    expect(services.filter((c) => c.detail !== undefined)).toEqual([]);
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/"instance"|"version"|"uptimeSeconds"/);
    for (const s of sys.services) expect(text).not.toContain(`${hostname()}:${s.process.pid}`);
  });

  it('goes 503 naming the service when one stops, and back to 200 when it returns', async () => {
    const shard1 = sys.services.find((s) => s.label === 'sessions-1')!;
    await shard1.stop();
    const down = await readyz(sys.gateway.url);
    expect(down.status).toBe(503);
    expect(down.body.checks.find((c) => c.name === 'sessions-1')?.ok).toBe(false);
    expect(down.body.checks.find((c) => c.name === 'sessions-0')?.ok).toBe(true);

    const back = await sys.start('sessions', { SHARD_INDEX: '1' }, 'sessions-1');
    sys.services.push(back);
    await waitFor(async () => (await readyz(sys.gateway.url)).status === 200, 20_000, 200, 'readyz 200 again');
  });

  it('gives every service its own /healthz and /readyz', async () => {
    for (const s of sys.services.filter((h) => h.process.running)) {
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    }
  });
});
