import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { api, simulatorInbound, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser, signIn } from './helpers.js';

/**
 * Webhooks end to end: endpoints added through the gateway, events from the real services, a real
 * local HTTP receiver that verifies every signature with the `standardwebhooks` package, a kill -9
 * of the integrations service in the middle of deliveries, and the SSRF rule.
 */

interface Hit {
  id: string;
  type: string;
  body: any;
  verified: boolean;
}

/** A receiver: verifies with `secret` (set per test), records, answers `status` (or holds the request while `hold`). */
class Receiver {
  server!: Server;
  url = '';
  secrets = new Map<string, string>();
  hits: Hit[] = [];
  hold = false;
  held: ServerResponse[] = [];

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const path = req.url ?? '';
        const secret = this.secrets.get(path);
        let verified = false;
        let body: any;
        try {
          body = new Webhook(secret ?? 'whsec_AAAA').verify(raw, req.headers as Record<string, string>);
          verified = true;
        } catch {
          body = JSON.parse(raw);
        }
        this.hits.push({ id: String(req.headers['webhook-id']), type: body.type, body, verified });
        if (this.hold) {
          this.held.push(res);
          return;
        }
        res.end('ok');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): void {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    this.server.close();
  }
}

let sys: System;
const receiver = new Receiver();

const integrations = () => sys.services.find((s) => s.name === 'integrations')!;

beforeAll(async () => {
  await receiver.start();
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: {
      gateway: { RATE_LIMIT_BURST: '1000' },
      integrations: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_LEASE_MS: '11000', WEBHOOK_POLL_MS: '200' },
    },
  });
}, 180_000);

afterAll(async () => {
  receiver.stop();
  await sys?.stop();
});

describe('endpoints', () => {
  it('adds an endpoint, sends a signed test event, lists the delivery, deletes it', async () => {
    const ann = await signIn(sys.gateway.url, 'ann');
    const created = await ann.post('/api/webhooks', {
      url: `${receiver.url}/ann`,
      events: ['message.sent', 'message.read'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: `${receiver.url}/ann`,
      events: ['message.sent', 'message.read'],
      enabled: true,
    });
    expect(created.body.secret).toMatch(/^whsec_/);
    receiver.secrets.set('/ann', created.body.secret);
    const id = created.body.id as string;
    expect((await ann.get('/api/webhooks')).body.webhooks.map((w: { id: string }) => w.id)).toEqual([id]);
    expect(JSON.stringify((await ann.get('/api/webhooks')).body)).not.toContain(created.body.secret);

    expect((await ann.post(`/api/webhooks/${id}/test`)).status).toBe(202);
    const hit = await waitFor(() => receiver.hits.find((h) => h.type === 'webhook.test'), 10_000);
    expect(hit.verified).toBe(true);
    const deliveries = await waitFor(async () => {
      const list = (await ann.get(`/api/webhooks/${id}/deliveries`)).body.deliveries;
      return list[0]?.status === 'succeeded' ? list : undefined;
    }, 10_000);
    expect(deliveries[0]).toMatchObject({ eventType: 'webhook.test', httpStatus: 200, attempts: 1, webhookId: hit.id });
    expect(deliveries[0].latencyMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(deliveries)).not.toContain('A test event');

    // Another user sees none of it.
    const eve = await signIn(sys.gateway.url, 'eve');
    expect((await eve.get(`/api/webhooks/${id}/deliveries`)).status).toBe(404);
    expect((await eve.post(`/api/webhooks/${id}/test`)).status).toBe(404);
    expect((await eve.delete(`/api/webhooks/${id}`)).status).toBe(404);

    expect((await ann.delete(`/api/webhooks/${id}`)).status).toBe(200);
    expect((await ann.get('/api/webhooks')).body.webhooks).toEqual([]);
  });

  it('refuses bad input in plain words', async () => {
    const bo = await signIn(sys.gateway.url, 'bo');
    const noEvents = await bo.post('/api/webhooks', { url: `${receiver.url}/x`, events: [] });
    expect(noEvents.status).toBe(400);
    expect(noEvents.body.error).toBe('Choose at least one event');
    const unknown = await bo.post('/api/webhooks', { url: `${receiver.url}/x`, events: ['message.exploded'] });
    expect(unknown.status).toBe(400);
    const notUrl = await bo.post('/api/webhooks', { url: 'nope', events: ['message.sent'] });
    expect(notUrl.status).toBe(400);
  });
});

describe('events', () => {
  it('a message sent with an API key reaches the endpoint as signed message.sent and campaign events', async () => {
    const cy = await linkedUser(sys.gateway.url, 'cy');
    const hook = await cy.post('/api/webhooks', {
      url: `${receiver.url}/cy`,
      events: ['message.sent', 'campaign.completed', 'message.received', 'contact.opted_out'],
    });
    receiver.secrets.set('/cy', hook.body.secret);
    const key = api(sys.gateway.url, (await createKey(cy, ALL_SCOPES)).secret);
    const sent = await key.post('/v1/messages', { to: '91234567', text: 'Your order has shipped' });
    expect(sent.status).toBe(202);
    const mine = () => receiver.hits.filter((h) => h.verified && h.body.data?.campaignId === sent.body.id);
    await waitFor(
      () =>
        mine().some((h) => h.type === 'message.sent') && mine().some((h) => h.type === 'campaign.completed')
          ? true
          : undefined,
      30_000,
    );
    expect(mine().find((h) => h.type === 'message.sent')!.body.data).toMatchObject({ to: '91234567' });
    await simulatorInbound(sys.gateway.url, cy.token, '85291234567', 'Thanks!');
    const reply = await waitFor(
      () => receiver.hits.find((h) => h.type === 'message.received' && h.body.data.text === 'Thanks!'),
      15_000,
    );
    expect(reply.verified).toBe(true);
    // A STOP reply puts the number on the opt-out list, and the endpoint hears of it.
    await simulatorInbound(sys.gateway.url, cy.token, '85291234567', 'STOP');
    const optedOut = await waitFor(
      () => receiver.hits.find((h) => h.type === 'contact.opted_out' && h.verified),
      15_000,
    );
    expect(optedOut.body.data.phoneNumber).toMatch(/91234567$/);
    const status = await key.get(`/v1/messages/${sent.body.id}`);
    expect(status.status).toBe(200);
    expect(status.body.timeline.map((t: { status: string }) => t.status)).toEqual(
      expect.arrayContaining(['queued', 'sent']),
    );
  }, 60_000);
});

describe('a crash mid-delivery', () => {
  it('kill -9 of integrations while POSTs are in flight loses none; a repeat carries the same webhook-id', async () => {
    const dee = await linkedUser(sys.gateway.url, 'dee');
    const hook = await dee.post('/api/webhooks', { url: `${receiver.url}/dee`, events: ['message.received'] });
    receiver.secrets.set('/dee', hook.body.secret);
    const texts = Array.from({ length: 10 }, (_, i) => `reply ${i}`);
    receiver.hold = true;
    for (const text of texts) await simulatorInbound(sys.gateway.url, dee.token, '85291234567', text);
    const ofDee = () => receiver.hits.filter((h) => h.type === 'message.received' && texts.includes(h.body.data.text));
    // Some POSTs are in flight (held unanswered) when the service dies.
    await waitFor(() => (ofDee().length >= 1 ? true : undefined), 15_000);
    await integrations().kill9();
    receiver.hold = false;
    for (const r of receiver.held.splice(0)) r.destroy();
    const restarted = await sys.start('integrations');
    sys.services.splice(sys.services.indexOf(integrations()), 1, restarted);
    await waitFor(
      () => (new Set(ofDee().map((h) => h.body.data.text)).size === texts.length ? true : undefined),
      60_000,
    );
    // Every delivery of one event carried the same id and the same body; distinct events distinct ids.
    const byText = new Map<string, Set<string>>();
    for (const h of ofDee()) byText.set(h.body.data.text, (byText.get(h.body.data.text) ?? new Set()).add(h.id));
    for (const ids of byText.values()) expect(ids.size).toBe(1);
    expect(new Set([...byText.values()].map((s) => [...s][0])).size).toBe(texts.length);
    expect(ofDee().every((h) => h.verified)).toBe(true);
  }, 120_000);
});

describe('unsafe targets', () => {
  let restarted: ServiceHandle;
  beforeAll(async () => {
    // The same service without the allow-list: loopback, private and metadata addresses are refused.
    await integrations().stop();
    restarted = await sys.start('integrations', { WEBHOOK_ALLOWED_HOSTS: '' });
    sys.services.splice(sys.services.indexOf(integrations()), 1, restarted);
  }, 60_000);

  it.each([
    'http://127.0.0.1:9/x',
    'https://127.0.0.1/x',
    'https://10.0.0.8/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/x',
    'https://localhost/x',
  ])('refuses %s when it is added', async (url) => {
    const fox = await signIn(sys.gateway.url, 'fox');
    const res = await fox.post('/api/webhooks', { url, events: ['message.sent'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/not allowed|https/);
  });
});
