import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ContactsErrorCode, type SegmentRule } from '@bns/contracts';
import { AppError, rows, Transactions } from '@bns/service-kit';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { FactsRepository } from '../../facts/facts.repository.js';
import { SegmentsRepository } from '../segments.repository.js';
import { SegmentsService } from '../segments.service.js';

const USER = 'shop';
const JOB = '11111111-1111-4111-8111-111111111111';
const OTHER_JOB = '22222222-2222-4222-8222-222222222222';

let app: InProcess;
let segments: SegmentsRepository;

/**
 * Six contacts chosen so that each rule below selects a different set:
 *   A 90000001 vip,new    name Ann   city Kowloon        messaged+read in JOB, replied
 *   B 90000002 vip        name Ben   city Central        messaged in JOB (not read)
 *   C 90000003 new        name —     city —              opted out
 *   D 90000004 staff,vip  name Dan   city Kowloon Tong   failed in JOB (not on WhatsApp)
 *   E 90000005 —          name Eve   city central        messaged in OTHER_JOB 90 days ago
 *   F 90000006 new,staff  name Fay   city ""             never messaged
 */
beforeAll(async () => {
  app = await inProcess([SegmentsRepository, SegmentsService, FactsRepository]);
  segments = app.module.get(SegmentsRepository);
  const em = app.module.get(Transactions).manager;
  const contacts: [string, string[], string | null, Record<string, string>][] = [
    ['90000001', ['vip', 'new'], 'Ann', { city: 'Kowloon' }],
    ['90000002', ['vip'], 'Ben', { city: 'Central' }],
    ['90000003', ['new'], null, {}],
    ['90000004', ['staff', 'vip'], 'Dan', { city: 'Kowloon Tong' }],
    ['90000005', [], 'Eve', { city: 'central' }],
    ['90000006', ['new', 'staff'], 'Fay', { city: '' }],
  ];
  for (const [phone, tags, name, fields] of contacts)
    await rows(
      em,
      `INSERT INTO contacts (user_id, phone, name, fields, tags, source) VALUES ($1, $2, $3, $4, $5, 'import')`,
      [USER, phone, name, fields, tags],
    );
  // Someone else's contact that every rule would select: never counted.
  await rows(
    em,
    `INSERT INTO contacts (user_id, phone, tags, source) VALUES ('other', '90000001', '{vip,new}', 'api')`,
  );
  const facts = app.module.get(FactsRepository);
  const now = new Date();
  const sent = (
    phone: string,
    kind: 'sent' | 'delivered' | 'read' | 'failed',
    job: string,
    at = now,
    notOnWhatsApp = false,
  ) =>
    facts.fold({ kind, userId: USER, phone, at, key: `out:${job}:${phone}`, jobId: job, text: 'Sale', notOnWhatsApp });
  await sent('90000001', 'sent', JOB);
  await sent('90000001', 'read', JOB);
  await facts.fold({ kind: 'replied', userId: USER, phone: '90000001', at: now, key: 'in:1', text: 'Yes' });
  await sent('90000002', 'sent', JOB);
  await sent('90000004', 'failed', JOB, now, true);
  await sent('90000005', 'sent', OTHER_JOB, new Date(Date.now() - 90 * 86_400_000));
  await facts.optedOut(USER, ['90000003'], now);
}, 60_000);

afterAll(() => app?.stop());

const cases: [string, SegmentRule, string[]][] = [
  ['tags any of', { tags: { anyOf: ['vip', 'staff'] } }, ['1', '2', '4', '6']],
  ['tags all of', { tags: { allOf: ['vip', 'new'] } }, ['1']],
  ['tags none of', { tags: { noneOf: ['new', 'staff'] } }, ['2', '5']],
  ['any of and none of together', { tags: { anyOf: ['vip'], noneOf: ['staff'] } }, ['1', '2']],
  [
    'field equals (case and spaces ignored)',
    { fields: [{ key: 'city', op: 'equals', value: ' CENTRAL' }] },
    ['2', '5'],
  ],
  ['field contains', { fields: [{ key: 'city', op: 'contains', value: 'kowloon' }] }, ['1', '4']],
  ['field is empty (missing or blank)', { fields: [{ key: 'city', op: 'isEmpty' }] }, ['3', '6']],
  ['name is empty', { fields: [{ key: 'name', op: 'isEmpty' }] }, ['3']],
  ['opted out / not', { facts: [{ fact: 'optedOut', value: false }], tags: { anyOf: ['new'] } }, ['1', '6']],
  [
    'messaged in the campaign but did not read it',
    {
      facts: [
        { fact: 'messaged', jobId: JOB },
        { fact: 'read', jobId: JOB, value: false },
      ],
    },
    ['2'],
  ],
  [
    'failed in the campaign; not on WhatsApp',
    { facts: [{ fact: 'failed', jobId: JOB }, { fact: 'notOnWhatsApp' }] },
    ['4'],
  ],
  ['not messaged for 30 days', { facts: [{ fact: 'notMessagedForDays', days: 30 }] }, ['3', '4', '5', '6']],
];

describe('segment rules', () => {
  it.each(cases)('%s', async (_name, rule, expected) => {
    const phones = await segments.phones(USER, rule);
    expect(phones).toEqual(expected.map((n) => `9000000${n}`));
    expect(await segments.count(USER, rule)).toBe(expected.length);
  });

  it('replied in the campaign: the reply is tied to the last campaign that messaged the number', async () => {
    expect(await segments.phones(USER, { facts: [{ fact: 'replied', jobId: JOB }] })).toEqual(['90000001']);
  });

  it('a saved segment of another user is not found; a bad rule is refused in plain words', async () => {
    const service = app.module.get(SegmentsService);
    const { id } = await service.create(USER, { name: 'VIP', rule: { tags: { anyOf: ['vip'] } } });
    expect(await service.count(USER, id)).toEqual({ count: 3 });
    const other = await service.count('other', id).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(AppError);
    expect((other as AppError).code).toBe(ContactsErrorCode.SegmentNotFound);
    const bad = await service
      .create(USER, { name: 'x', rule: { fields: [{ key: 'city', op: 'like' }] } })
      .catch((e: unknown) => e);
    expect((bad as AppError).code).toBe(ContactsErrorCode.InvalidSegment);
  });

  it('members are fixed when the job starts: a contact created later does not join', async () => {
    const asOf = new Date().toISOString();
    await rows(
      app.module.get(Transactions).manager,
      `INSERT INTO contacts (user_id, phone, tags, source) VALUES ($1, '90000009', '{vip}', 'api')`,
      [USER],
    );
    const members = await segments.members(USER, { tags: { anyOf: ['vip'] } }, asOf, undefined, 10);
    expect(members).toEqual([
      { phone: '90000001', variables: { name: 'Ann', city: 'Kowloon' } },
      { phone: '90000002', variables: { name: 'Ben', city: 'Central' } },
      { phone: '90000004', variables: { name: 'Dan', city: 'Kowloon Tong' } },
    ]);
  });
});
