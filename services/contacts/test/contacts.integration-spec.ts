import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io, type Socket } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import {
  api,
  devSignIn,
  simulatorInbound,
  simulatorOutbox,
  simulatorScan,
  startSystem,
  waitFor,
  type System,
} from '@bns/testing';

/**
 * The contact book, segments and inbox through the gateway: real gateway, contacts, jobs and sessions
 * services (simulated WhatsApp), real NATS and Postgres.
 */

type Client = ReturnType<typeof api> & { userId: string; token: string };

let sys: System;
let seq = 0;
const FAILING = '97770000';

async function signIn(name: string): Promise<Client> {
  const s = await devSignIn(sys.gateway.url, `${name}.${++seq}.${process.pid}@contacts.test`, name);
  return { ...api(sys.gateway.url, s.token), userId: s.userId, token: s.token };
}

async function linked(name: string): Promise<Client> {
  const who = await signIn(name);
  const socket: Socket = io(sys.gateway.url, {
    path: SOCKET.path,
    transports: [...SOCKET.transports],
    auth: { token: who.token },
    reconnection: false,
    forceNew: true,
  });
  try {
    const ready = new Promise((resolve) => socket.once('ready', resolve));
    socket.emit('createSession', { id: who.userId, clerkUserId: who.userId, isExplicitRequest: true });
    await simulatorScan(sys.gateway.url, who.token);
    await ready;
  } finally {
    socket.close();
  }
  return who;
}

async function finished(c: Client, jobId: string) {
  return waitFor(async () => {
    const r = await c.get(`/job-status/${jobId}`);
    return ['completed', 'failed', 'cancelled'].includes(r.body.job?.status) ? r.body.job : undefined;
  }, 60_000);
}

beforeAll(async () => {
  sys = await startSystem({
    services: ['contacts', 'jobs', 'sessions'],
    shards: 1,
    serviceEnv: {
      gateway: { RATE_LIMIT_BURST: '1000' },
      jobs: { SEND_DELAY_MS: '50', SEND_JITTER_MS: '0' },
      sessions: { SIM_FAIL_NUMBERS: FAILING, SIM_DELIVERED_DELAY_MS: '50' },
    },
  });
}, 180_000);

afterAll(() => sys?.stop());

describe('contacts through the gateway', () => {
  it('adds, finds, changes and deletes; another user gets 404 everywhere', async () => {
    const ann = await signIn('ann');
    const bob = await signIn('bob');
    const created = await ann.post('/api/contacts', { phone: '+852 6123 4567', name: 'Chan', tags: ['vip'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ phone: '61234567', name: 'Chan', tags: ['vip'], source: 'api' });
    const id = created.body.id as string;
    expect((await ann.post('/api/contacts', { phone: '61234567' })).status).toBe(409);
    expect((await ann.post('/api/contacts', { phone: '12' })).status).toBe(400);

    const list = await ann.get('/api/contacts?q=chan&tag=vip&limit=10');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, nextCursor: null });
    expect(list.body.contacts[0].id).toBe(id);
    expect((await ann.get('/api/contacts?limit=abc')).status).toBe(400);

    const segment = await ann.post('/api/segments', { name: 'VIPs', rule: { tags: { anyOf: ['vip'] } } });
    expect(segment.status).toBe(201);
    const segmentId = segment.body.id as string;
    expect((await ann.get(`/api/segments/${segmentId}/count`)).body).toEqual({ count: 1 });

    // Bob sees none of Ann's.
    expect((await bob.get('/api/contacts')).body).toEqual({ contacts: [], nextCursor: null, total: 0 });
    expect((await bob.patch(`/api/contacts/${id}`, { name: 'x' })).status).toBe(404);
    expect((await bob.delete(`/api/contacts/${id}`)).status).toBe(404);
    expect((await bob.get(`/api/segments/${segmentId}/count`)).status).toBe(404);
    expect((await bob.delete(`/api/segments/${segmentId}`)).status).toBe(404);
    expect((await bob.post('/start-bulk-messages', { message: 'hi', segmentId })).status).toBe(404);
    expect((await bob.get('/api/segments')).body).toEqual({ segments: [] });

    const patched = await ann.patch(`/api/contacts/${id}`, { fields: { shop: 'Central' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Chan', fields: { shop: 'Central' } });
    expect((await ann.delete(`/api/contacts/${id}`)).status).toBe(200);
    expect((await ann.get('/api/contacts')).body.total).toBe(0);
  });

  it('imports merged by number: one contact for two forms of the same number', async () => {
    const ann = await signIn('ann');
    const res = await ann.post('/api/contacts/import', {
      tags: ['import-1'],
      rows: [
        { phone: '91234567', name: 'Ann', fields: { shop: 'Central' } },
        { phone: '+852 9123 4567', fields: { city: 'Kowloon' }, tags: ['vip'] },
        { phone: 'call me' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 1, updated: 0, invalid: 1, duplicates: 1 });
    const [c] = (await ann.get('/api/contacts')).body.contacts;
    expect(c).toMatchObject({
      phone: '91234567',
      name: 'Ann',
      fields: { shop: 'Central', city: 'Kowloon' },
      tags: ['vip', 'import-1'],
      source: 'import',
    });
  });

  it('imports a list too big for one NATS message (staged), all at once', async () => {
    const ann = await signIn('ann');
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      phone: String(50_000_000 + i),
      name: `Customer ${i}`,
      fields: { shop: i % 2 ? 'Central' : 'Mong Kok' },
    }));
    const res = await ann.post('/api/contacts/import', { rows, tags: ['bulk'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 20_000, updated: 0, invalid: 0, duplicates: 0 });
    expect((await ann.get('/api/contacts?tag=bulk&limit=1')).body.total).toBe(20_000);
    expect((await ann.get('/api/contacts?q=customer 1999&limit=200')).body.total).toBe(11);
  });
});

describe('export', () => {
  it('streams the book as CSV with spreadsheet formulas neutralised', async () => {
    const ann = await signIn('ann');
    await ann.post('/api/contacts/import', {
      rows: [
        { phone: '91110001', name: '=HYPERLINK("http://evil.example","Click")', tags: ['vip'] },
        { phone: '91110002', name: 'Chan, Tai Man', fields: { note: '+1 call back' } },
      ],
    });
    const res = await fetch(`${sys.gateway.url}/api/contacts/export`, {
      headers: { authorization: `Bearer ${ann.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text())
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toBe('phone,name,tags,fields,source,createdAt,optedOutAt,lastRepliedAt');
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.startsWith('91110001'))).toContain(
      `"'=HYPERLINK(""http://evil.example"",""Click"")",vip,`,
    );
    expect(lines.find((l) => l.startsWith('91110002'))).toContain('"Chan, Tai Man",,note=+1 call back,import');
    const other = await signIn('bob');
    const theirs = await fetch(`${sys.gateway.url}/api/contacts/export`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(
      (await theirs.text())
        .replace(/^\uFEFF/, '')
        .trim()
        .split('\r\n'),
    ).toHaveLength(1);
  });
});

describe('campaigns to a segment, facts and the inbox', () => {
  it('sends to the segment without opted-out and not-on-WhatsApp numbers, filling {{name|friend}}', async () => {
    const shop = await linked('shop');
    // WhatsApp does not know FAILING: a first job teaches the jobs service so.
    const first = await shop.post('/start-bulk-messages', { message: 'Hello', phoneNumbers: [FAILING] });
    expect(first.status).toBe(200);
    await finished(shop, first.body.jobId);
    // One customer asked to stop.
    expect((await shop.post(`/api/opt-outs/${shop.userId}`, { phoneNumbers: ['97770002'] })).status).toBe(200);

    const imported = await shop.post('/api/contacts/import', {
      rows: [
        { phone: '97770001', name: 'Amy', tags: ['vip'] },
        { phone: '97770002', name: 'Ben', tags: ['vip'] },
        { phone: FAILING, name: 'Cat', tags: ['vip'] },
        { phone: '97770003', tags: ['vip'] },
        { phone: '97770004', name: 'Dan', tags: ['vip', 'staff'] },
        { phone: '97770005', name: 'Eve' },
      ],
    });
    expect(imported.body.created).toBe(6);
    const segment = await shop.post('/api/segments', {
      name: 'VIP customers',
      rule: { tags: { anyOf: ['vip'], noneOf: ['staff'] } },
    });
    expect((await shop.get(`/api/segments/${segment.body.id}/count`)).body).toEqual({ count: 4 });

    const started = await shop.post('/start-bulk-messages', {
      message: 'Hi {{name|friend}}, our sale starts today',
      segmentId: segment.body.id,
    });
    expect(started.status).toBe(200);
    const job = await finished(shop, started.body.jobId);
    expect(job.status).toBe('completed');
    const outbox = await simulatorOutbox(sys.gateway.url, shop.token);
    const sale = outbox.filter((m) => m.text.includes('sale')).map((m) => [m.to.slice(-8), m.text]);
    expect(sale.sort()).toEqual([
      ['97770001', 'Hi Amy, our sale starts today'],
      ['97770003', 'Hi friend, our sale starts today'],
    ]);

    // The facts arrive by events: the two messaged numbers, and the follow-up segment of the job.
    await waitFor(async () => {
      const list = (await shop.get('/api/contacts?q=9777000')).body.contacts as {
        phone: string;
        facts: { lastMessagedAt: string | null; lastDeliveredAt: string | null };
      }[];
      const messaged = list.filter((c) => c.facts.lastDeliveredAt !== null).map((c) => c.phone);
      return messaged.length === 2 ? messaged : undefined;
    }, 30_000);
    const followUp = await shop.post('/api/segments', {
      name: 'Sale: messaged',
      rule: { facts: [{ fact: 'messaged', jobId: started.body.jobId }] },
    });
    expect((await shop.get(`/api/segments/${followUp.body.id}/count`)).body).toEqual({ count: 2 });
    const replied = await shop.post('/api/segments', {
      name: 'Sale: replied',
      rule: { facts: [{ fact: 'replied', jobId: started.body.jobId }] },
    });
    expect((await shop.get(`/api/segments/${replied.body.id}/count`)).body).toEqual({ count: 0 });

    // A reply lands in the inbox, unread, and counts for the campaign it answered.
    await simulatorInbound(sys.gateway.url, shop.token, '85297770001', 'Can I come tomorrow instead?');
    const conversations = await waitFor(async () => {
      const r = await shop.get('/api/conversations');
      return r.body.conversations?.[0]?.lastMessage?.direction === 'in' ? r.body.conversations : undefined;
    }, 30_000);
    expect(conversations[0]).toMatchObject({
      phone: '97770001',
      name: 'Amy',
      unread: 1,
      lastMessage: { direction: 'in', text: 'Can I come tomorrow instead?' },
      jobId: started.body.jobId,
    });
    expect((await shop.get(`/api/segments/${replied.body.id}/count`)).body).toEqual({ count: 1 });
    const thread = await shop.get('/api/conversations/85297770001');
    expect(thread.status).toBe(200);
    expect(thread.body.messages.map((m: { direction: string; text: string }) => [m.direction, m.text])).toEqual([
      ['out', 'Hi Amy, our sale starts today'],
      ['in', 'Can I come tomorrow instead?'],
    ]);
    expect((await shop.get('/api/conversations')).body.conversations[0].unread).toBe(0);
    expect((await shop.get('/api/conversations/123')).status).toBe(400);

    // The answer goes out through the send path.
    const answer = await shop.post('/api/conversations/97770001/messages', { text: 'Sure {{name|there}}, see you' });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ id: expect.any(String) });
    await waitFor(async () => {
      const out = await simulatorOutbox(sys.gateway.url, shop.token);
      return out.some((m) => m.text === 'Sure Amy, see you') ? true : undefined;
    }, 30_000);
    expect((await shop.post('/api/conversations/97770001/messages', { text: '  ' })).status).toBe(400);

    // A reply from a number not in the book adds it, with source "reply".
    await simulatorInbound(sys.gateway.url, shop.token, '85297779999', 'Who is this?');
    const added = await waitFor(async () => {
      const r = await shop.get('/api/contacts?q=97779999');
      return r.body.contacts[0];
    }, 30_000);
    expect(added).toMatchObject({ phone: '97779999', source: 'reply' });
  });
});
