import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { strFromU8, unzipSync } from 'fflate';
import { io, type Socket } from 'socket.io-client';
import { FOLLOW_UPS, MEDIA_MESSAGES, SOCKET, type FollowUpKind } from '@bns/contracts';
import {
  api,
  devSignIn,
  mediaFiles,
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
    services: ['contacts', 'jobs', 'sessions', 'integrations'],
    shards: 1,
    serviceEnv: {
      gateway: { RATE_LIMIT_BURST: '1000' },
      jobs: { SEND_DELAY_MS: '50', SEND_JITTER_MS: '0' },
      sessions: {
        SIM_FAIL_NUMBERS: FAILING,
        SIM_DELIVERED_DELAY_MS: '50',
        SIM_READ_DELAY_MS: '300',
        SIM_UNREAD_NUMBERS: '97770003',
      },
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
    // Only numbers that wrote to us are in the inbox (97770003 got the sale too, and did not answer).
    expect(conversations.map((c: { phone: string }) => c.phone)).toEqual(['97770001']);
    expect(conversations[0]).toMatchObject({
      phone: '97770001',
      name: 'Amy',
      unread: 1,
      lastMessage: { direction: 'in', text: 'Can I come tomorrow instead?' },
      jobId: started.body.jobId,
    });
    expect((await shop.get(`/api/segments/${replied.body.id}/count`)).body).toEqual({ count: 1 });

    // Each follow-up audience of the report ("Follow up" in the web) is exactly the report's recipients.
    type Row = {
      phoneNumber: string;
      status: string;
      sentAt: string | null;
      readAt: string | null;
      repliedAt: string | null;
    };
    // Read acks come SIM_READ_DELAY_MS after each send (97770003 never reads) and the reply is folded in
    // batches: the report is read once both are in.
    const report = await waitFor(async () => {
      const rows = (await shop.get(`/job-results/${started.body.jobId}?limit=200`)).body.results as Row[];
      const amy = rows.find((r) => r.phoneNumber === '97770001');
      return amy?.readAt && amy.repliedAt ? rows : undefined;
    }, 30_000);
    const expected: Record<FollowUpKind, string[]> = {
      notRead: report.filter((r) => r.sentAt && !r.readAt).map((r) => r.phoneNumber),
      read: report.filter((r) => r.readAt).map((r) => r.phoneNumber),
      replied: report.filter((r) => r.repliedAt).map((r) => r.phoneNumber),
      failed: report.filter((r) => r.status === 'failed').map((r) => r.phoneNumber),
    };
    expect(expected.replied).toEqual(['97770001']);
    expect(expected.notRead).toEqual(['97770003']);
    for (const kind of Object.keys(FOLLOW_UPS) as FollowUpKind[]) {
      const made = await shop.post('/api/segments', {
        name: `Follow-up ${kind}`,
        rule: { facts: FOLLOW_UPS[kind].facts(started.body.jobId) },
      });
      // The facts arrive by events: wait until the segment holds what the report says, or fail saying what it held.
      const want = JSON.stringify(expected[kind].sort());
      let held = '';
      await waitFor(async () => {
        const members = (await shop.get(`/api/segments/${made.body.id}/members`)).body.recipients as {
          phone: string;
        }[];
        held = JSON.stringify(members.map((m) => m.phone).sort());
        return held === want ? true : undefined;
      }, 15_000).catch(() => undefined);
      expect([kind, held]).toEqual([kind, want]);
    }
    // A contact's history (the Contacts tab's panel) leaves the conversation unread.
    const peek = await shop.get('/api/conversations/97770001?markRead=false');
    expect(peek.body.messages).toHaveLength(2);
    expect((await shop.get('/api/conversations')).body.conversations[0].unread).toBe(1);
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

    // An answer with an attachment: the file goes with the text as its caption; another user's file is not found.
    const upload = async (who: Client, name: string, bytes: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)]), name);
      const res = await fetch(`${sys.gateway.url}/api/media`, {
        method: 'POST',
        headers: { authorization: `Bearer ${who.token}` },
        body: form,
      });
      return (await res.json()) as { mediaId: string; sha256: string };
    };
    const menu = await upload(shop, 'menu.png', mediaFiles.png(2000));
    const evesFile = await upload(await signIn('eve'), 'eve.png', mediaFiles.png(3000));
    const foreign = await shop.post('/api/conversations/97770001/messages', {
      text: 'Not mine',
      mediaId: evesFile.mediaId,
    });
    expect([foreign.status, foreign.body.error]).toEqual([404, MEDIA_MESSAGES.notFound]);
    const withFile = await shop.post('/api/conversations/97770001/messages', {
      text: 'Here is the menu',
      mediaId: menu.mediaId,
    });
    expect(withFile.status).toBe(202);
    const sentFile = await waitFor(async () => {
      const out = await simulatorOutbox(sys.gateway.url, shop.token);
      return out.find((m) => m.text === 'Here is the menu');
    }, 30_000);
    expect(sentFile.media).toMatchObject({ kind: 'image', sha256: menu.sha256, fileName: 'menu.png' });
    expect((await simulatorOutbox(sys.gateway.url, shop.token)).some((m) => m.text === 'Not mine')).toBe(false);

    // Marked unread again, then read; another user, or a number with no conversation, is not found.
    expect((await shop.post('/api/conversations/85297770001/unread')).body).toEqual({ phone: '97770001', unread: 1 });
    const listed = (await shop.get('/api/conversations')).body.conversations as { phone: string; unread: number }[];
    expect(listed.find((c) => c.phone === '97770001')!.unread).toBe(1);
    expect((await shop.post('/api/conversations/97770001/read')).body).toEqual({ phone: '97770001', unread: 0 });
    expect((await (await signIn('eve')).post('/api/conversations/97770001/unread')).status).toBe(404);
    expect((await shop.post('/api/conversations/97770099/read')).status).toBe(404);
    expect((await shop.post('/api/conversations/12/read')).status).toBe(400);

    // A reply from a number not in the book adds it, with source "reply".
    await simulatorInbound(sys.gateway.url, shop.token, '85297779999', 'Who is this?');
    const added = await waitFor(async () => {
      const r = await shop.get('/api/contacts?q=97779999');
      return r.body.contacts[0];
    }, 30_000);
    expect(added).toMatchObject({ phone: '97779999', source: 'reply' });
  });

  it('lists and exports a segment, changes it in bulk; the opt-out outlives the contact', async () => {
    const ann = await signIn('ann');
    const bob = await signIn('bob');
    const rows = Array.from({ length: 12 }, (_, i) => ({
      phone: `9666${String(i).padStart(4, '0')}`,
      name: `C${i}`,
      tags: i % 2 === 0 ? ['even'] : ['odd'],
    }));
    expect((await ann.post('/api/contacts/import', { rows })).body.created).toBe(12);
    const even = (await ann.post('/api/segments', { name: 'Even', rule: { tags: { anyOf: ['even'] } } })).body.id;
    // The editor's live count of a rule not saved yet; another user's book counts nothing of ann's.
    expect((await ann.post('/api/segments/preview', { rule: { tags: { anyOf: ['even'] } } })).body).toEqual({
      count: 6,
    });
    expect((await bob.post('/api/segments/preview', { rule: { tags: { anyOf: ['even'] } } })).body).toEqual({
      count: 0,
    });
    expect((await ann.post('/api/segments/preview', { rule: { facts: [{ fact: 'nope' }] } })).status).toBe(400);

    // The list and the export of a segment hold exactly its contacts.
    const listed = await ann.get(`/api/contacts?segmentId=${even}&limit=4`);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(6);
    expect(listed.body.contacts).toHaveLength(4);
    const csv = await fetch(`${sys.gateway.url}/api/contacts/export?segmentId=${even}`, {
      headers: { authorization: `Bearer ${ann.token}` },
    });
    const lines = (await csv.text()).trim().split(/\r\n/);
    expect(lines).toHaveLength(7);
    expect(lines.slice(1).every((l) => l.includes('even'))).toBe(true);
    // The same selection as XLSX: a real workbook, a header and one row per contact, dates as date cells.
    const xlsx = await fetch(`${sys.gateway.url}/api/contacts/export?segmentId=${even}&format=xlsx&tz=Asia/Hong_Kong`, {
      headers: { authorization: `Bearer ${ann.token}` },
    });
    expect(xlsx.headers.get('content-type')).toContain('spreadsheetml');
    const sheet = strFromU8(unzipSync(new Uint8Array(await xlsx.arrayBuffer()))['xl/worksheets/sheet1.xml']!);
    expect(sheet.match(/<row /g)).toHaveLength(7);
    expect(sheet).toContain('<t>C0</t>');
    expect(sheet).toMatch(/<c r="F2" s="1"><v>\d+\.\d+<\/v><\/c>/);
    const badFormat = await ann.get(`/api/contacts/export?format=pdf`);
    expect(badFormat.status).toBe(400);
    expect((await bob.get(`/api/contacts?segmentId=${even}`)).status).toBe(404);

    // Compose's "Choose contacts" pages through the segment with each contact's variables.
    const members = await ann.get(`/api/segments/${even}/members`);
    expect(members.status).toBe(200);
    expect(members.body.recipients).toHaveLength(6);
    expect(members.body.recipients[0]).toEqual({ phone: '96660000', variables: { name: 'C0' } });
    expect(members.body).toMatchObject({ nextCursor: null, asOf: expect.any(String) });
    // Contacts added after asOf do not join.
    const before = await ann.get(`/api/segments/${even}/members?asOf=2020-01-01T00:00:00Z`);
    expect(before.body.recipients).toEqual([]);
    expect((await ann.get(`/api/segments/${even}/members?asOf=yesterday`)).status).toBe(400);
    expect((await bob.get(`/api/segments/${even}/members`)).status).toBe(404);

    // One contact by id; another user's is not found.
    const one = listed.body.contacts[0] as { id: string; phone: string };
    expect((await ann.get(`/api/contacts/${one.id}`)).body).toMatchObject({ id: one.id, phone: one.phone });
    expect((await bob.get(`/api/contacts/${one.id}`)).status).toBe(404);
    expect((await ann.get('/api/contacts/not-an-id')).status).toBe(404);

    // Bulk tag by segment (every batch), untag by ids, then delete by ids; bob's ids change nothing of ann's.
    expect((await ann.post('/api/contacts/bulk', { action: 'tag', tags: ['promo'], segmentId: even })).body).toEqual({
      affected: 6,
    });
    expect((await ann.post('/api/contacts/bulk', { action: 'tag', tags: ['promo'], segmentId: even })).body).toEqual({
      affected: 0,
    });
    expect((await ann.get('/api/contacts?tag=promo')).body.total).toBe(6);
    const ids = ((await ann.get('/api/contacts?tag=promo&limit=2')).body.contacts as { id: string }[]).map((c) => c.id);
    expect((await bob.post('/api/contacts/bulk', { action: 'delete', ids })).body).toEqual({ affected: 0 });
    expect((await ann.post('/api/contacts/bulk', { action: 'untag', tags: ['promo'], ids })).body).toEqual({
      affected: 2,
    });
    expect((await ann.get('/api/contacts?tag=promo')).body.total).toBe(4);
    expect((await ann.post('/api/contacts/bulk', { action: 'delete', ids: [...ids, 'junk'] })).body).toEqual({
      affected: 2,
    });
    expect((await ann.get('/api/contacts')).body.total).toBe(10);

    // Refusals in plain words, nothing changed.
    const refusals = [
      [{ action: 'paint', ids }, 'action must be tag, untag or delete'],
      [{ action: 'tag', ids }, 'Name the tags to add or remove'],
      [{ action: 'delete' }, 'Choose the contacts'],
      [{ action: 'delete', ids, segmentId: even }, 'Choose the contacts'],
    ] as const;
    for (const [body, words] of refusals) {
      const r = await ann.post('/api/contacts/bulk', body);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain(words);
    }
    expect((await bob.post('/api/contacts/bulk', { action: 'delete', segmentId: even })).status).toBe(404);

    // A STOP is remembered for the number after its contact is deleted.
    const kept = (await ann.get('/api/contacts?q=96660011')).body.contacts[0] as { id: string };
    expect((await ann.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: ['96660011'] })).status).toBe(200);
    expect((await ann.delete(`/api/contacts/${kept.id}`)).status).toBe(200);
    expect(JSON.stringify((await ann.get(`/api/opt-outs/${ann.userId}`)).body)).toContain('96660011');
  });

  it('/v1: contacts and segments with an API key, and a campaign to a segment', async () => {
    const shop = await linked('v1shop');
    const other = await signIn('v1other');
    const keyOf = async (who: Client, scopes: string[]) => {
      const r = await who.post('/api/keys', { name: 'backend', scopes });
      expect(r.status).toBe(201);
      return api(sys.gateway.url, r.body.secret as string);
    };
    const key = await keyOf(shop, ['read', 'contacts:write', 'campaigns:write', 'messages:send']);
    const readOnly = await keyOf(shop, ['read']);
    const otherKey = await keyOf(other, ['read', 'contacts:write']);

    const created = await key.post('/v1/contacts', { phone: '85296550001', name: 'Ada', fields: { plan: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ phone: '96550001', name: 'Ada', source: 'api' });
    expect((await key.post('/v1/contacts', { phone: '96550002', tags: ['gold'] })).status).toBe(201);
    expect((await key.post('/v1/contacts', { phone: '96550001' })).status).toBe(409);
    const refused = await key.post('/v1/contacts', { phone: 'abc' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('problem+json');
    expect((await readOnly.post('/v1/contacts', { phone: '96550003' })).status).toBe(403);

    const id = created.body.id as string;
    expect((await key.get(`/v1/contacts/${id}`)).body.name).toBe('Ada');
    expect((await key.patch(`/v1/contacts/${id}`, { tags: ['gold'] })).body.tags).toEqual(['gold']);
    expect((await otherKey.get(`/v1/contacts/${id}`)).status).toBe(404);
    expect((await otherKey.patch(`/v1/contacts/${id}`, { name: 'X' })).status).toBe(404);
    expect((await otherKey.delete(`/v1/contacts/${id}`)).status).toBe(404);
    const page = await key.get('/v1/contacts?q=9655&limit=1');
    expect(page.body).toMatchObject({ total: 2, data: [expect.objectContaining({ phone: expect.any(String) })] });
    expect(typeof page.body.nextCursor).toBe('string');
    expect((await otherKey.get('/v1/contacts')).body.total).toBe(0);

    const segment = await key.post('/v1/segments', { name: 'Gold', rule: { tags: { anyOf: ['gold'] } } });
    expect(segment.status).toBe(201);
    expect((await key.get(`/v1/segments/${segment.body.id}/count`)).body).toEqual({ count: 2 });
    expect(((await key.get('/v1/segments')).body.data as { id: string }[]).map((s) => s.id)).toContain(segment.body.id);
    expect((await otherKey.get(`/v1/segments/${segment.body.id}/count`)).status).toBe(404);

    // A campaign to the segment, {{name|customer}} filled per contact.
    const started = await key.post('/v1/campaigns', {
      message: 'Dear {{name|customer}}, your {{plan|silver}} offer',
      segmentId: segment.body.id,
    });
    expect(started.status).toBe(201);
    expect(started.body.total).toBe(2);
    expect((await otherKey.post('/v1/campaigns', { message: 'x', segmentId: segment.body.id })).status).toBe(403);
    await waitFor(async () => {
      const out = await simulatorOutbox(sys.gateway.url, shop.token);
      const texts = out.filter((m) => m.text.includes('offer')).map((m) => m.text);
      return texts.length === 2 ? texts.sort() : undefined;
    }, 30_000).then((texts) =>
      expect(texts).toEqual(['Dear Ada, your gold offer', 'Dear customer, your silver offer']),
    );

    // A transactional message fills {{var|fallback}} too.
    const message = await key.post('/v1/messages', {
      to: '96550003',
      text: 'Hi {{name|there}}, ref {{ref}}',
      variables: { ref: 'A1' },
    });
    expect(message.status).toBe(202);
    await waitFor(async () => {
      const out = await simulatorOutbox(sys.gateway.url, shop.token);
      return out.some((m) => m.text === 'Hi there, ref A1') ? true : undefined;
    }, 30_000);

    expect((await key.delete(`/v1/segments/${segment.body.id}`)).body).toEqual({ id: segment.body.id, deleted: true });
    expect((await key.delete(`/v1/contacts/${id}`)).body).toEqual({ id, deleted: true });
    expect((await key.get(`/v1/contacts/${id}`)).status).toBe(404);
  });
});
