import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONTACT_MESSAGES, ContactsErrorCode } from '@bns/contracts';
import { AppError, NATS_CONNECTION } from '@bns/service-kit';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { FactsRepository } from '../../facts/facts.repository.js';
import { ContactsAccountData } from '../../account/contacts-account-data.js';
import { ContactsMetrics } from '../../metrics/contacts.metrics.js';
import { SegmentsRepository } from '../../segments/segments.repository.js';
import { SegmentsService } from '../../segments/segments.service.js';
import { ContactsRepository } from '../contacts.repository.js';
import { ContactsService } from '../contacts.service.js';

let app: InProcess;
let contacts: ContactsService;
let facts: FactsRepository;
let seq = 0;
const user = () => `user-${++seq}`;

beforeAll(async () => {
  app = await inProcess([
    ContactsRepository,
    ContactsService,
    ContactsMetrics,
    FactsRepository,
    SegmentsRepository,
    SegmentsService,
    ContactsAccountData,
    { provide: NATS_CONNECTION, useValue: {} },
  ]);
  contacts = app.module.get(ContactsService);
  facts = app.module.get(FactsRepository);
}, 60_000);

afterAll(() => app?.stop());

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('contacts', () => {
  it('creates with the number normalised as the send screen does; the same number again is a conflict', async () => {
    const u = user();
    const c = await contacts.create(u, {
      phone: '+852 9123-4567',
      name: ' Ann ',
      fields: { city: 'Kowloon' },
      tags: ['vip', 'vip', ' new '],
    });
    expect(c).toMatchObject({
      phone: '91234567',
      name: 'Ann',
      fields: { city: 'Kowloon' },
      tags: ['vip', 'new'],
      source: 'api',
    });
    expect(c.facts).toEqual({
      optedOutAt: null,
      notOnWhatsAppAt: null,
      lastMessagedAt: null,
      lastDeliveredAt: null,
      lastReadAt: null,
      lastRepliedAt: null,
    });
    const again = await refusal(contacts.create(u, { phone: '85291234567' }));
    expect(again.code).toBe(ContactsErrorCode.AlreadyExists);
    const bad = await refusal(contacts.create(u, { phone: '123' }));
    expect(bad.message).toBe(CONTACT_MESSAGES.phoneInvalid);
  });

  it('another user sees none of it: list, update and delete answer not found', async () => {
    const owner = user();
    const other = user();
    const c = await contacts.create(owner, { phone: '91230000' });
    expect((await contacts.list(other, {})).total).toBe(0);
    expect((await refusal(contacts.update(other, c.id, { name: 'x' }))).code).toBe(ContactsErrorCode.NotFound);
    expect((await refusal(contacts.remove(other, c.id))).code).toBe(ContactsErrorCode.NotFound);
    expect((await contacts.list(owner, {})).total).toBe(1);
  });

  it('searches number, name, tag and field values; pages newest first with a cursor', async () => {
    const u = user();
    for (let i = 0; i < 7; i++)
      await contacts.create(u, {
        phone: `9000000${i}`,
        name: i % 2 ? `Odd ${i}` : `Even ${i}`,
        tags: i < 3 ? ['a'] : ['b'],
        fields: { shop: i === 5 ? 'Mong Kok' : 'Central' },
      });
    expect((await contacts.list(u, { q: 'odd' })).total).toBe(3);
    expect((await contacts.list(u, { q: '90000004' })).contacts.map((c) => c.name)).toEqual(['Even 4']);
    expect((await contacts.list(u, { q: 'mong' })).total).toBe(1);
    expect((await contacts.list(u, { tag: 'a' })).total).toBe(3);
    expect((await contacts.list(u, { q: '100%' })).total).toBe(0);
    const first = await contacts.list(u, { limit: '3' });
    expect(first.total).toBe(7);
    expect(first.contacts.map((c) => c.phone)).toEqual(['90000006', '90000005', '90000004']);
    const second = await contacts.list(u, { limit: '3', cursor: first.nextCursor });
    expect(second.contacts.map((c) => c.phone)).toEqual(['90000003', '90000002', '90000001']);
    const third = await contacts.list(u, { limit: '3', cursor: second.nextCursor });
    expect(third.contacts.map((c) => c.phone)).toEqual(['90000000']);
    expect(third.nextCursor).toBeNull();
    expect((await refusal(contacts.list(u, { cursor: 'nonsense' }))).code).toBe(ContactsErrorCode.InvalidQuery);
    expect((await refusal(contacts.list(u, { limit: '500' }))).code).toBe(ContactsErrorCode.InvalidQuery);
  });

  it('updates only what is sent; a number taken by another contact is a conflict', async () => {
    const u = user();
    const a = await contacts.create(u, { phone: '91110000', name: 'A', tags: ['x'] });
    await contacts.create(u, { phone: '91110001' });
    const changed = await contacts.update(u, a.id, { name: 'Alice' });
    expect(changed).toMatchObject({ name: 'Alice', tags: ['x'], phone: '91110000' });
    expect((await refusal(contacts.update(u, a.id, { phone: '91110001' }))).code).toBe(ContactsErrorCode.AlreadyExists);
  });

  it('deleting a contact keeps what is known about its number (an opt-out stays)', async () => {
    const u = user();
    const c = await contacts.create(u, { phone: '92220000' });
    await facts.optedOut(u, ['92220000'], new Date('2026-01-01T00:00:00Z'));
    await contacts.remove(u, c.id);
    const back = await contacts.create(u, { phone: '92220000' });
    expect(back.facts.optedOutAt).toBe('2026-01-01T00:00:00.000Z');
  });
});

describe('import', () => {
  it('merges rows by number: later non-empty values win, tags merge, repeats count as duplicates', async () => {
    const u = user();
    await contacts.create(u, { phone: '93330000', name: 'Old', fields: { city: 'Sha Tin', shop: 'A' }, tags: ['old'] });
    const answer = await contacts.import({
      userId: u,
      body: {
        tags: ['spring'],
        rows: [
          { phone: '93330001', name: 'Ann', tags: ['vip'] },
          { phone: '+852 9333 0001', name: '', fields: { City: 'Kowloon' }, tags: ['new'] },
          { phone: 'not a number' },
          { phone: '85293330000', fields: { city: 'Tuen Mun', shop: '' } },
          {},
        ],
      },
    });
    expect(answer).toEqual({ created: 1, updated: 1, invalid: 2, duplicates: 1, invalidRows: [3, 5] });
    const { contacts: list } = await contacts.list(u, {});
    const ann = list.find((c) => c.phone === '93330001')!;
    expect(ann).toMatchObject({
      name: 'Ann',
      fields: { city: 'Kowloon' },
      tags: ['vip', 'new', 'spring'],
      source: 'import',
    });
    const old = list.find((c) => c.phone === '93330000')!;
    expect(old).toMatchObject({
      name: 'Old',
      fields: { city: 'Tuen Mun', shop: 'A' },
      tags: ['old', 'spring'],
      source: 'api',
    });
  });

  it('keeps tags exactly as written, quotes, backslashes, braces, commas and spaces included', async () => {
    const u = user();
    const odd = ['say "hi"', 'back\\slash', '{braced}', 'a,b', ' NULL ', 'NULL', '中文'];
    const repo = app.module.get(ContactsRepository);
    await repo.importRows(u, [{ phone: '94660001', name: null, fields: {}, tags: odd }], 2, 10);
    await repo.importRows(u, [{ phone: '94660002', name: null, fields: {}, tags: [] }], 2, 10);
    const found = new Map((await contacts.list(u, {})).contacts.map((c) => [c.phone, c.tags]));
    expect(found.get('94660001')).toEqual(odd);
    expect(found.get('94660002')).toEqual([]);
    expect((await contacts.list(u, { tag: 'say "hi"' })).total).toBe(1);
  });

  it('is all or nothing: past the limit nothing is written', async () => {
    const u = user();
    const repo = app.module.get(ContactsRepository);
    const rows = [0, 1, 2].map((i) => ({ phone: `9444000${i}`, name: null, fields: {}, tags: [] }));
    expect(await repo.importRows(u, rows, 2, 2)).toBe('full');
    expect((await contacts.list(u, {})).total).toBe(0);
    expect(await repo.importRows(u, rows, 2, 3)).toEqual({ created: 3, updated: 0 });
  });

  it('leaves a contact the row would not change as it was, and changes one it would', async () => {
    const u = user();
    const rows = [
      { phone: '94550001', name: 'Ann', fields: { city: 'Sha Tin' }, tags: ['vip'] },
      { phone: '94550002', name: 'Bo', fields: { city: 'Tai Po' }, tags: ['a', 'b'] },
    ];
    await contacts.import({ userId: u, body: { rows } });
    const before = new Map((await contacts.list(u, {})).contacts.map((c) => [c.phone, c]));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await contacts.import({
      userId: u,
      body: {
        rows: [
          { phone: '94550001', name: '', fields: { city: 'Sha Tin' } },
          { ...rows[1], tags: ['b', 'c'] },
        ],
      },
    });
    expect(again).toMatchObject({ created: 0, updated: 2 });
    const after = new Map((await contacts.list(u, {})).contacts.map((c) => [c.phone, c]));
    expect(after.get('94550001')).toEqual(before.get('94550001'));
    expect(after.get('94550002')!.tags).toEqual(['a', 'b', 'c']);
    expect(after.get('94550002')!.updatedAt > before.get('94550002')!.updatedAt).toBe(true);
  });
});

describe('after a big import', () => {
  const lastAnalyze = async () =>
    (
      (await app.db.query(
        `SELECT last_analyze FROM pg_stat_user_tables WHERE schemaname = 'contacts' AND relname = 'contacts'`,
      )) as { last_analyze: Date | null }[]
    )[0]!.last_analyze?.getTime() ?? 0;

  it('refreshes the statistics searches are planned with, and only when it wrote enough rows', async () => {
    const u = user();
    const repo = app.module.get(ContactsRepository);
    const rows = [0, 1, 2].map((i) => ({ phone: `9788000${i}`, name: null, fields: {}, tags: [] }));
    const before = await lastAnalyze();
    await repo.importRows(u, rows.slice(0, 1), 2, 10, 2);
    expect(await lastAnalyze()).toBe(before);
    await repo.importRows(u, rows, 2, 10, 2);
    expect(await lastAnalyze()).toBeGreaterThan(before);
  });
});

describe('the book size', () => {
  it('follows creates, imports, deletes and bulk deletes, and goes with the account', async () => {
    const u = user();
    const other = user();
    await contacts.create(other, { phone: '95660000' });
    const a = await contacts.create(u, { phone: '95660001' });
    await contacts.import({
      userId: u,
      body: { rows: [2, 3, 4, 5, 1].map((i) => ({ phone: `9566000${i}`, tags: ['t'] })) },
    });
    expect((await contacts.list(u, {})).total).toBe(5);
    await contacts.remove(u, a.id);
    expect((await contacts.list(u, {})).total).toBe(4);
    const ids = (await contacts.list(u, { q: '95660002' })).contacts.map((c) => c.id);
    expect(await contacts.bulk(u, { action: 'delete', ids })).toEqual({ affected: 1 });
    expect((await contacts.list(u, {})).total).toBe(3);
    expect((await contacts.list(u, { tag: 't' })).total).toBe(3);
    expect((await contacts.list(other, {})).total).toBe(1);
    await app.module.get(ContactsAccountData).deleteUser(u);
    expect((await contacts.list(u, {})).total).toBe(0);
    const left = (await app.db.query(`SELECT count(*)::int AS n FROM contact_count_deltas WHERE user_id = $1`, [
      u,
    ])) as {
      n: number;
    }[];
    expect(left[0]!.n).toBe(0);
    expect((await contacts.list(other, {})).total).toBe(1);
  });

  it('still refuses a contact past the limit once the count is kept by triggers', async () => {
    const u = user();
    const repo = app.module.get(ContactsRepository);
    const rows = [0, 1].map((i) => ({ phone: `9677000${i}`, name: null, fields: {}, tags: [] }));
    expect(await repo.importRows(u, rows, 1, 2)).toEqual({ created: 2, updated: 0 });
    expect(await repo.insert(u, { phone: '96770009' }, 'api', 2)).toBe('full');
    expect(await repo.importRows(u, [{ phone: '96770003', name: null, fields: {}, tags: [] }], 1, 2)).toBe('full');
    expect((await contacts.list(u, {})).total).toBe(2);
  });
});
