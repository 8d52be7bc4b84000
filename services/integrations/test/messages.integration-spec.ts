import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api, simulatorOutbox, startSystem, waitFor, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser } from './helpers.js';

/**
 * POST /v1/messages: one transactional message, under the account's sending policy, taken before the
 * account's queued campaign messages, with its status and timeline at GET /v1/messages/{id}.
 */

let sys: System;
const GAP_MS = 150;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' }, jobs: { SEND_DELAY_MS: String(GAP_MS), SEND_JITTER_MS: '0' } },
  });
}, 180_000);

afterAll(() => sys?.stop());

const numbers = (n: number, start = 60_000_000) => Array.from({ length: n }, (_, i) => String(start + i));

describe('transactional messages', () => {
  it('go ahead of a running 1,000-recipient campaign of the same account', async () => {
    const shop = await linkedUser(sys.gateway.url, 'shop');
    const key = api(sys.gateway.url, (await createKey(shop, ALL_SCOPES)).secret);
    const campaign = await key.post('/v1/campaigns', { message: 'Spring sale', phoneNumbers: numbers(1000) });
    expect(campaign.status).toBe(201);
    // The campaign is sending.
    await waitFor(
      async () => ((await key.get(`/v1/campaigns/${campaign.body.id}`)).body.progress.sent >= 3 ? true : undefined),
      30_000,
    );

    const sent = await key.post('/v1/messages', {
      to: '91234567',
      text: 'Reminder: your appointment is tomorrow at 10:00',
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ id: expect.any(String), status: 'queued' });
    const queuedAt = Date.now();
    const status = await waitFor(async () => {
      const s = await key.get(`/v1/messages/${sent.body.id}`);
      return s.body.status === 'sent' || s.body.status === 'delivered' || s.body.status === 'read' ? s.body : undefined;
    }, 30_000);
    const waitedMs = Date.now() - queuedAt;
    expect(status).toMatchObject({ id: sent.body.id, to: '91234567' });
    expect(status.timeline.map((t: { status: string }) => t.status).slice(0, 2)).toEqual(['queued', 'sent']);

    // On the phone side: the reminder went out after at most two more campaign messages, while
    // hundreds of the campaign's were still waiting.
    const outbox = await simulatorOutbox(sys.gateway.url, shop.token);
    const at = outbox.findIndex((m) => m.text.startsWith('Reminder:'));
    const campaignBefore = outbox.slice(0, at).filter((m) => m.text === 'Spring sale').length;
    const afterQueued = (await key.get(`/v1/campaigns/${campaign.body.id}`)).body;
    expect(at).toBeGreaterThan(0);
    expect(afterQueued.status).toBe('running');
    expect(afterQueued.progress.sent).toBeLessThan(1000);
    const sentWhenQueued = campaignBefore;
    // It was taken at the next slot or the one after (the slot in hand may already be prepared).
    expect(sentWhenQueued - 3).toBeLessThanOrEqual(Math.ceil(waitedMs / GAP_MS) + 2);
    expect(waitedMs).toBeLessThan(20 * GAP_MS + 5000);
    process.stdout.write(
      `transactional message sent ${waitedMs} ms after it was queued, after ${campaignBefore} campaign messages (gap ${GAP_MS} ms)\n`,
    );
    await key.post(`/v1/campaigns/${campaign.body.id}/cancel`);
  }, 90_000);

  it('uses a saved template with variables, and says why a message cannot be sent', async () => {
    const clinic = await linkedUser(sys.gateway.url, 'clinic');
    const key = api(sys.gateway.url, (await createKey(clinic, ALL_SCOPES)).secret);
    const template = await clinic.post(`/api/templates/${clinic.userId}`, {
      name: 'Reminder',
      message_content: 'Hi {{name}}, see you at {{time}}',
    });
    expect(template.status).toBe(201);
    const sent = await key.post('/v1/messages', {
      to: '91234500',
      templateId: template.body.template.id,
      variables: { name: 'Ann', time: '10:00' },
    });
    expect(sent.status).toBe(202);
    await waitFor(
      async () => ((await key.get(`/v1/messages/${sent.body.id}`)).body.status !== 'queued' ? true : undefined),
      30_000,
    );
    const outbox = await simulatorOutbox(sys.gateway.url, clinic.token);
    expect(outbox.map((m) => m.text)).toContain('Hi Ann, see you at 10:00');

    const unknownTemplate = await key.post('/v1/messages', {
      to: '91234500',
      templateId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknownTemplate.status).toBe(404);
    // An opted-out number is skipped, with the reason.
    await key.post('/v1/opt-outs', { phoneNumbers: ['91234501'] });
    const skipped = await key.post('/v1/messages', { to: '91234501', text: 'Hello' });
    expect(skipped.status).toBe(202);
    const view = await waitFor(async () => {
      const s = await key.get(`/v1/messages/${skipped.body.id}`);
      return s.body.status === 'skipped' ? s.body : undefined;
    }, 15_000);
    expect(view.timeline.at(-1)).toMatchObject({ status: 'skipped' });
  }, 90_000);
});
