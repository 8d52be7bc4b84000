import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { INTEGRATIONS_LIMITS } from '@bns/contracts';
import { api, startSystem, waitFor, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser, type Client } from './helpers.js';

/**
 * What a /v1 message carries back out: its metadata (stored, echoed by GET /v1/messages/{id} and its
 * message.* webhooks), `message.skipped` with the reason for a recipient that was not sent to, and
 * today's sends against the daily cap in GET /v1/account. Real services, a real local receiver that
 * verifies every signature with the `standardwebhooks` package.
 */

interface Hit {
  id: string;
  path: string;
  body: { type: string; data: Record<string, any> };
  verified: boolean;
}

const secrets = new Map<string, string>();
const hits: Hit[] = [];
let server: Server;
let receiverUrl = '';
let sys: System;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      let verified = false;
      let body: Hit['body'];
      try {
        body = new Webhook(secrets.get(path) ?? 'whsec_AAAA').verify(
          raw,
          req.headers as Record<string, string>,
        ) as Hit['body'];
        verified = true;
      } catch {
        body = JSON.parse(raw) as Hit['body'];
      }
      hits.push({ id: String(req.headers['webhook-id']), path, body, verified });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: {
      gateway: { RATE_LIMIT_BURST: '1000' },
      jobs: { SEND_DELAY_MS: '100', SEND_JITTER_MS: '0' },
      integrations: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '200' },
    },
    // A shared, busy machine: starting five processes may take minutes.
    startTimeoutMs: 420_000,
  });
}, 480_000);

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await sys?.stop();
});

/** A linked user with an endpoint for `events` at its own path, and an API key with every scope. */
async function account(
  name: string,
  events: string[],
): Promise<{ owner: Client; key: ReturnType<typeof api>; path: string }> {
  const owner = await linkedUser(sys.gateway.url, name);
  const path = `/${name}`;
  const hook = await owner.post('/api/webhooks', { url: `${receiverUrl}${path}`, events });
  expect(hook.status).toBe(201);
  secrets.set(path, hook.body.secret as string);
  return { owner, key: api(sys.gateway.url, (await createKey(owner, ALL_SCOPES)).secret), path };
}

const of = (path: string, type: string) => hits.filter((h) => h.path === path && h.body.type === type);

describe('metadata of a /v1 message', () => {
  it('is stored, answered by GET /v1/messages/{id} and carried by its message.* webhooks', async () => {
    const { key, path } = await account('meta', ['message.sent', 'message.delivered']);
    const metadata = { orderId: '1042', customer: 'C-77' };
    const sent = await key.post('/v1/messages', { to: '91230001', text: 'Your order has shipped', metadata });
    expect(sent.status).toBe(202);

    const view = await waitFor(async () => {
      const s = await key.get(`/v1/messages/${sent.body.id}`);
      return s.body.status !== 'queued' ? s.body : undefined;
    }, 30_000);
    expect(view).toMatchObject({ id: sent.body.id, to: '91230001', metadata });

    const hit = await waitFor(
      () => of(path, 'message.sent').find((h) => h.body.data.campaignId === sent.body.id),
      30_000,
    );
    expect(hit.verified).toBe(true);
    expect(hit.body.data).toMatchObject({ campaignId: sent.body.id, to: '91230001', metadata });

    // A message sent without metadata answers none.
    const plain = await key.post('/v1/messages', { to: '91230002', text: 'Hello' });
    const plainView = (await key.get(`/v1/messages/${plain.body.id}`)).body;
    expect(plainView.metadata).toBeUndefined();
  }, 90_000);

  it('is bounded: too many keys, too long a value, too many bytes or a NUL are a 400 problem', async () => {
    const { key } = await account('metabad', ['message.sent']);
    const many = Object.fromEntries(
      Array.from({ length: INTEGRATIONS_LIMITS.messageMetadataKeysMax + 1 }, (_, i) => [`k${i}`, 'v']),
    );
    const long = { note: 'x'.repeat(INTEGRATIONS_LIMITS.messageMetadataValueMax + 1) };
    const bytes = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`k${i}`, 'é'.repeat(INTEGRATIONS_LIMITS.messageMetadataValueMax)]),
    );
    for (const metadata of [many, long, bytes, { a: 'b\u0000c' }, { a: 1 }, ['x']]) {
      const res = await key.post('/v1/messages', { to: '91230003', text: 'Hi', metadata });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.type).toBe('/v1/problems/validation');
      expect(res.body.detail).toMatch(/metadata/);
    }
  });
});

describe('message.skipped', () => {
  it('tells of a /v1 message to an opted-out number, with the reason and its metadata', async () => {
    const { key, path } = await account('skip', ['message.skipped', 'message.sent']);
    expect((await key.post('/v1/opt-outs', { phoneNumbers: ['91230010'] })).status).toBe(201);
    const sent = await key.post('/v1/messages', { to: '91230010', text: 'Hello', metadata: { ref: 'r-1' } });
    expect(sent.status).toBe(202);
    const hit = await waitFor(
      () => of(path, 'message.skipped').find((h) => h.body.data.campaignId === sent.body.id),
      30_000,
    );
    expect(hit.verified).toBe(true);
    expect(hit.body.data).toMatchObject({
      campaignId: sent.body.id,
      to: '91230010',
      status: 'skipped',
      reason: 'opted_out',
      metadata: { ref: 'r-1' },
    });
  }, 60_000);

  it('tells of each skipped recipient of a campaign once, and of none that was sent', async () => {
    const { key, path } = await account('skipc', ['message.skipped']);
    await key.post('/v1/opt-outs', { phoneNumbers: ['91230021', '91230023'] });
    const campaign = await key.post('/v1/campaigns', {
      message: 'Sale',
      phoneNumbers: ['91230020', '91230021', '91230022', '91230023'],
    });
    expect(campaign.status).toBe(201);
    await waitFor(
      async () => ((await key.get(`/v1/campaigns/${campaign.body.id}`)).body.status === 'completed' ? true : undefined),
      30_000,
    );
    const mine = () => of(path, 'message.skipped').filter((h) => h.body.data.campaignId === campaign.body.id);
    await waitFor(() => (mine().length >= 2 ? true : undefined), 15_000);
    // Later progress reports of the campaign add nothing.
    await new Promise((r) => setTimeout(r, 1500));
    expect(
      mine()
        .map((h) => h.body.data.to)
        .sort(),
    ).toEqual(['91230021', '91230023']);
    expect(mine().every((h) => h.verified && h.body.data.reason === 'opted_out')).toBe(true);
    expect(new Set(mine().map((h) => h.id)).size).toBe(2);
  }, 60_000);
});

describe('GET /v1/account', () => {
  it("answers today's sends against the daily cap, as the jobs service counts them", async () => {
    const { owner, key } = await account('cap', ['message.sent']);
    const set = await owner.put(`/api/sending-policy/${owner.userId}`, { dailyCap: 5 });
    expect(set.status).toBe(200);
    const before = (await key.get('/v1/account')).body;
    expect(before.today).toMatchObject({ sent: 0, cap: 5, remaining: 5 });
    expect(before.today.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const campaign = await key.post('/v1/campaigns', {
      message: 'Hello',
      phoneNumbers: ['91230030', '91230031', '91230032'],
    });
    expect(campaign.status).toBe(201);
    await waitFor(
      async () => ((await key.get(`/v1/campaigns/${campaign.body.id}`)).body.status === 'completed' ? true : undefined),
      30_000,
    );
    const after = (await key.get('/v1/account')).body;
    expect(after.today).toMatchObject({ date: before.today.date, sent: 3, cap: 5, remaining: 2 });
    expect(['ready', 'exist']).toContain(after.whatsapp.state);
  }, 60_000);
});

describe('contact.opted_out', () => {
  it('is delivered although the integrations service was down when the number opted out', async () => {
    const { key, path } = await account('optout', ['contact.opted_out']);
    // The gateway keeps a verified key in its memory: it answers while the integrations service is down.
    expect((await key.get('/v1/account')).status).toBe(200);
    const integrations = sys.services.find((s) => s.name === 'integrations')!;
    await integrations.stop();
    // Nobody hears the jobs service's notice now; the opt-out itself is committed.
    expect((await key.post('/v1/opt-outs', { phoneNumbers: ['91230040', '91230041'] })).status).toBe(201);
    const restarted = await sys.start('integrations');
    sys.services.splice(sys.services.indexOf(integrations), 1, restarted);
    // Its start-up sweep reads the list back to the endpoint's watermark.
    await waitFor(() => (of(path, 'contact.opted_out').length >= 2 ? true : undefined), 60_000);
    expect(
      of(path, 'contact.opted_out')
        .map((h) => h.body.data.phoneNumber)
        .sort(),
    ).toEqual(['91230040', '91230041']);
    expect(of(path, 'contact.opted_out').every((h) => h.verified)).toBe(true);

    // Heard live: one more, once, even though later sweeps read the list again.
    expect((await key.post('/v1/opt-outs', { phoneNumbers: ['91230042'] })).status).toBe(201);
    await waitFor(() => (of(path, 'contact.opted_out').length >= 3 ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(of(path, 'contact.opted_out')).toHaveLength(3);
  }, 480_000);
});
