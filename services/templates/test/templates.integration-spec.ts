import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  CommonErrorCode,
  duplicateTemplateName,
  ErrorKind,
  LIMITS,
  MESSAGES,
  TEMPLATE_MESSAGES,
  type RequestKey,
  type Template,
} from '@bns/contracts';
import { AppError, connectNats, RpcClient } from '@bns/service-kit';
import { api, devSignIn, startSystem, type System } from '@bns/testing';

/**
 * The Templates part of the spec through the gateway: real gateway, real templates service, real NATS
 * and Postgres, dev tokens. Each block signs in its own users so blocks do not see each other's data.
 */

type Client = ReturnType<typeof api> & { userId: string; base: string };

let sys: System;
let seq = 0;

async function signIn(name: string): Promise<Client> {
  const session = await devSignIn(sys.gateway.url, `${name}.${++seq}@templates.test`, name);
  return { ...api(sys.gateway.url, session.token), userId: session.userId, base: `/api/templates/${session.userId}` };
}

async function create(client: Client, body: Record<string, unknown>): Promise<Template> {
  const res = await client.post(client.base, { message_content: 'Hello', ...body });
  expect(res.status).toBe(201);
  return res.body.template as Template;
}

const numbers = (n: number, start = 85_210_000_000) => Array.from({ length: n }, (_, i) => String(start + i));
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  // The suite sends more than the default burst per user; the limiter itself is tested in the gateway.
  sys = await startSystem({ services: ['templates'], serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' } } });
}, 120_000);

afterAll(() => sys?.stop());

describe('create', () => {
  it('creates with defaults and answers {success, template}', async () => {
    const alice = await signIn('alice');
    const res = await alice.post(alice.base, { name: 'Welcome', message_content: 'Hi *there*' });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const t = res.body.template as Template;
    expect(t).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Welcome',
      description: '',
      message_content: 'Hi *there*',
      phone_numbers: [],
      category: 'general',
      is_favorite: false,
      usage_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Date.parse(t.created_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('keeps every field; phone_numbers may be a JSON string; unknown fields are ignored', async () => {
    const alice = await signIn('alice');
    const res = await alice.post(alice.base, {
      name: '  Promo  ',
      description: 'Monday blast',
      message_content: 'Sale _today_',
      phone_numbers: JSON.stringify(['85212345678', '+852 8765 4321']),
      category: 'marketing',
      is_favorite: true,
      usage_count: 99,
      id: UNKNOWN_ID,
      user_id: 'someone-else',
      created_at: '2000-01-01T00:00:00Z',
    });
    expect(res.status).toBe(201);
    expect(res.body.template).toMatchObject({
      name: 'Promo',
      description: 'Monday blast',
      message_content: 'Sale _today_',
      phone_numbers: ['85212345678', '85287654321'],
      category: 'marketing',
      is_favorite: true,
      usage_count: 0,
    });
    expect(res.body.template.id).not.toBe(UNKNOWN_ID);
    expect(res.body.template.created_at.startsWith('2000')).toBe(false);

    const list = await alice.get(alice.base);
    expect(list.body.templates).toEqual([res.body.template]);
  });

  it('odd text (NUL, emoji, quotes) is stored, never a 500', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, { name: "O'Brien \u0000😀", message_content: 'Line1\nLine2 \u0000 "q" 😀' });
    expect(t.name).toBe("O'Brien 😀");
    expect(t.message_content).toBe('Line1\nLine2  "q" 😀');
  });

  it('accepts the limits exactly: 100-char name, 1000-char message, 500-char description, 200 numbers', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, {
      name: 'n'.repeat(100),
      message_content: 'm'.repeat(1000),
      description: 'd'.repeat(500),
      phone_numbers: numbers(200),
    });
    expect(t.name).toHaveLength(100);
    expect(t.message_content).toHaveLength(1000);
    expect(t.description).toHaveLength(500);
    expect(t.phone_numbers).toEqual(numbers(200));
  });
});

describe('validation (SPEC §5, exact messages)', () => {
  let alice: Client;
  beforeAll(async () => {
    alice = await signIn('alice');
  });

  const ok = { name: 'Valid', message_content: 'Valid message' };
  const cases: [string, Record<string, unknown>, Record<string, string>][] = [
    ['name missing', { message_content: 'x' }, { name: 'Template name is required' }],
    ['name blank', { ...ok, name: '   ' }, { name: 'Template name is required' }],
    ['name too long', { ...ok, name: 'n'.repeat(101) }, { name: 'Template name must be 100 characters or less' }],
    ['name of zero-width spaces', { ...ok, name: '\u200b\u200b' }, { name: 'Template name is required' }],
    ['name of a word joiner and a BOM', { ...ok, name: ' \u2060\ufeff ' }, { name: 'Template name is required' }],
    ['message missing', { name: 'x' }, { message_content: 'Message content is required' }],
    ['message blank', { ...ok, message_content: '' }, { message_content: 'Message content is required' }],
    [
      'message of invisible characters',
      { ...ok, message_content: '\u200b\n\u2060\ufeff' },
      { message_content: 'Message content is required' },
    ],
    [
      'message too long',
      { ...ok, message_content: 'm'.repeat(1001) },
      { message_content: 'Message content must be 1000 characters or less' },
    ],
    ['description too long', { ...ok, description: 'd'.repeat(501) }, { description: MESSAGES.descriptionTooLong }],
    [
      'one bad number',
      { ...ok, phone_numbers: ['85212345678', '1234567'] },
      { phone_numbers: 'Phone number must be 8-15 digits. Invalid phone numbers: 1234567' },
    ],
    [
      'too many digits',
      { ...ok, phone_numbers: ['1234567890123456'] },
      { phone_numbers: 'Phone number must be 8-15 digits. Invalid phone numbers: 1234567890123456' },
    ],
    [
      'several bad numbers',
      { ...ok, phone_numbers: ['123', '85212345678', 'abc'] },
      { phone_numbers: 'Invalid phone numbers: 123, abc' },
    ],
    [
      'several bad numbers as a JSON string',
      { ...ok, phone_numbers: '["12","34"]' },
      { phone_numbers: 'Invalid phone numbers: 12, 34' },
    ],
    [
      'duplicate number',
      { ...ok, phone_numbers: ['85212345678', '85212345678'] },
      { phone_numbers: 'Phone number already added' },
    ],
    [
      'duplicate after formatting',
      { ...ok, phone_numbers: ['85212345678', '+852 1234-5678'] },
      { phone_numbers: 'Phone number already added' },
    ],
    ['201 numbers', { ...ok, phone_numbers: numbers(201) }, { phone_numbers: 'Maximum 200 phone numbers allowed' }],
    ['unknown category', { ...ok, category: 'spam' }, { category: MESSAGES.categoryInvalid }],
    ['name is a number', { ...ok, name: 5 }, { name: TEMPLATE_MESSAGES.nameNotText }],
    [
      'message is an object',
      { ...ok, message_content: { text: 'x' } },
      { message_content: TEMPLATE_MESSAGES.messageContentNotText },
    ],
    ['description is a list', { ...ok, description: ['x'] }, { description: TEMPLATE_MESSAGES.descriptionNotText }],
    ['is_favorite is "yes"', { ...ok, is_favorite: 'yes' }, { is_favorite: TEMPLATE_MESSAGES.isFavoriteNotBoolean }],
    [
      'phone_numbers is a number',
      { ...ok, phone_numbers: 85212345678 },
      { phone_numbers: TEMPLATE_MESSAGES.phoneNumbersNotList },
    ],
    [
      'phone_numbers is broken JSON',
      { ...ok, phone_numbers: '["85212345678"' },
      { phone_numbers: TEMPLATE_MESSAGES.phoneNumbersNotList },
    ],
    [
      'several fields at once',
      { name: '', message_content: 'm'.repeat(1001), category: 'x' },
      {
        name: 'Template name is required',
        message_content: 'Message content must be 1000 characters or less',
        category: MESSAGES.categoryInvalid,
      },
    ],
  ];

  it.each(cases)('create with %s → 400 with the field message', async (_label, body, errors) => {
    const res = await alice.post(alice.base, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Please fix the form errors', code: 'TEMPLATE_INVALID', errors });
  });

  it.each(cases.filter(([label]) => !label.includes('missing')))(
    'update with %s → 400 with the same message',
    async (_label, body, errors) => {
      const t = await create(alice, ok);
      const res = await alice.put(`${alice.base}/${t.id}`, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: 'Please fix the form errors',
        code: 'TEMPLATE_INVALID',
        errors,
      });
      // Nothing of a refused update is stored.
      const list = await alice.get(alice.base);
      expect(list.body.templates.find((x: Template) => x.id === t.id)).toEqual(t);
    },
  );

  it('a body that is not an object, or not JSON, is a 400 (never a 500)', async () => {
    const notObject = await alice.post(alice.base, [1, 2]);
    expect(notObject.status).toBe(400);
    expect(notObject.body).toMatchObject({
      success: false,
      error: TEMPLATE_MESSAGES.bodyNotObject,
      code: 'TEMPLATE_INVALID',
    });
    const notJson = await alice.post(alice.base, '{"name": "x",');
    expect(notJson.status).toBe(400);
    expect(notJson.body.success).toBe(false);
  });

  it('refused creates store nothing', async () => {
    const bob = await signIn('bob');
    await bob.post(bob.base, { name: '' });
    await bob.post(bob.base, { ...ok, phone_numbers: ['1'] });
    expect((await bob.get(bob.base)).body.templates).toEqual([]);
    expect((await bob.get(`${bob.base}/stats`)).body.stats.total_templates).toBe(0);
  });
});

describe(`at most ${LIMITS.templatesPerUserMax} templates per user`, () => {
  const MAX = LIMITS.templatesPerUserMax;
  const full = { success: false, error: TEMPLATE_MESSAGES.limitReached, code: 'TEMPLATE_LIMIT_REACHED' };

  /** Fills the user's templates up to `count` (in small parallel batches). */
  async function fill(client: Client, count: number, body: Record<string, unknown> = {}): Promise<Template[]> {
    const made: Template[] = [];
    for (let i = 0; i < count; i += 10) {
      const batch = Array.from({ length: Math.min(10, count - i) }, (_, j) =>
        create(client, { name: `t${i + j}`, ...body }),
      );
      made.push(...(await Promise.all(batch)));
    }
    return made;
  }

  it('a create or duplicate past the limit is a 409 in plain words and stores nothing; a delete makes room', async () => {
    expect(TEMPLATE_MESSAGES.limitReached).toBe(`You can keep up to ${MAX} templates. Delete one to add another.`);
    const alice = await signIn('alice');
    const made = await fill(alice, MAX);

    const more = await alice.post(alice.base, { name: 'One more', message_content: 'x' });
    expect(more.status).toBe(409);
    expect(more.body).toEqual(full);
    const copy = await alice.post(`${alice.base}/${made[0]!.id}/duplicate`);
    expect(copy.status).toBe(409);
    expect(copy.body).toEqual(full);
    // An invalid form still says what is wrong with it.
    expect((await alice.post(alice.base, { name: '' })).body.code).toBe('TEMPLATE_INVALID');
    // Edits, uses and favorites of the kept ones go on.
    expect((await alice.put(`${alice.base}/${made[1]!.id}`, { name: 'Renamed', is_favorite: true })).status).toBe(200);
    expect((await alice.post(`${alice.base}/${made[1]!.id}/use`)).status).toBe(200);
    expect((await alice.get(`${alice.base}/stats`)).body.stats.total_templates).toBe(MAX);

    expect((await alice.delete(`${alice.base}/${made[2]!.id}`)).status).toBe(200);
    expect((await alice.post(`${alice.base}/${made[0]!.id}/duplicate`)).status).toBe(201);
    expect((await alice.post(alice.base, { name: 'No room again', message_content: 'x' })).status).toBe(409);
    expect((await alice.get(alice.base)).body.templates).toHaveLength(MAX);

    // Another user's count is his own.
    const bob = await signIn('bob');
    expect((await bob.post(bob.base, { name: 'Mine', message_content: 'x' })).status).toBe(201);
  });

  it(`creates and duplicates racing at ${MAX - 1} store exactly one`, async () => {
    const alice = await signIn('alice');
    const [first] = await fill(alice, MAX - 1);
    const racing = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => alice.post(alice.base, { name: `race ${i}`, message_content: 'x' })),
      ...Array.from({ length: 4 }, () => alice.post(`${alice.base}/${first!.id}/duplicate`)),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    for (const refused of racing.filter((r) => r.status === 409)) expect(refused.body).toEqual(full);
    expect((await alice.get(alice.base)).body.templates).toHaveLength(MAX);
    expect((await alice.get(`${alice.base}/stats`)).body.stats.total_templates).toBe(MAX);
  });

  it('the list of as many templates as allowed, each at every limit in its costliest JSON, is answered', async () => {
    const alice = await signIn('alice');
    // U+0001 goes as \u0001 in JSON: 6 bytes a character, the most a field can cost (one visible
    // character each, or the field would be blank).
    const costly = (length: number) => `v${'\u0001'.repeat(length - 1)}`;
    const body = {
      name: costly(LIMITS.templateNameMax),
      description: costly(LIMITS.templateDescriptionMax),
      message_content: costly(LIMITS.templateMessageMax),
      phone_numbers: numbers(LIMITS.templatePhoneNumbersMax, 100_000_000_000_000),
    };
    await fill(alice, MAX, body);
    const list = await alice.get(alice.base);
    expect(list.status).toBe(200);
    expect(list.body.templates).toHaveLength(MAX);
    for (const t of list.body.templates as Template[]) expect(t).toMatchObject(body);
  });

  it('a user who kept more before the limit gets a prompt 413 in plain words for a list too large to send, not a 503 after 10 s', async () => {
    const alice = await signIn('alice');
    // 100 templates at every limit (about 1.3 MB as JSON: more than one NATS message), stored as an
    // older version without the limit would have, 2 of them in "custom".
    const db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO templates.templates (user_id, name, description, message_content, phone_numbers, category)
         SELECT $1, 'v' || repeat(chr(1), 99), repeat(chr(1), 500), 'v' || repeat(chr(1), 999),
                ARRAY(SELECT (100000000000000 + g)::text FROM generate_series(1, 200) g),
                CASE WHEN i <= 2 THEN 'custom' ELSE 'general' END
         FROM generate_series(1, 100) i`,
        [alice.userId],
      );
    } finally {
      await db.end();
    }
    const started = Date.now();
    const all = await alice.get(alice.base);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(all.status).toBe(413);
    expect(all.body).toEqual({ success: false, error: MESSAGES.replyTooLarge, code: CommonErrorCode.ReplyTooLarge });
    // Fewer items are answered (a category, the stats), a delete still works, and a create is still capped.
    const custom = await alice.get(`${alice.base}?category=custom`);
    expect(custom.status).toBe(200);
    expect(custom.body.templates).toHaveLength(2);
    expect((await alice.get(`${alice.base}/stats`)).body.stats.total_templates).toBe(100);
    expect((await alice.delete(`${alice.base}/${custom.body.templates[0].id}`)).status).toBe(200);
    expect((await alice.post(alice.base, { name: 'More', message_content: 'x' })).body).toEqual(full);
  });
});

describe('list: newest first, category and favorite filters', () => {
  let alice: Client;
  const made: Record<string, Template> = {};
  beforeAll(async () => {
    alice = await signIn('alice');
    // Oldest first; names say category and favorite.
    for (const [name, category, is_favorite] of [
      ['m1', 'marketing', false],
      ['b1', 'business', true],
      ['m2*', 'marketing', true],
      ['g1', 'general', false],
      ['b2', 'business', false],
    ] as const) {
      made[name] = await create(alice, { name, category, is_favorite });
    }
  });

  const names = async (query = '') => {
    const res = await alice.get(`${alice.base}${query}`);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    return (res.body.templates as Template[]).map((t) => t.name);
  };

  it('answers every template newest first', async () => {
    expect(await names()).toEqual(['b2', 'g1', 'm2*', 'b1', 'm1']);
    expect(await names('?category=&is_favorite=')).toEqual(['b2', 'g1', 'm2*', 'b1', 'm1']);
    expect(await names('?category=all')).toEqual(['b2', 'g1', 'm2*', 'b1', 'm1']);
  });

  it('filters by category, by favorite, and by both', async () => {
    expect(await names('?category=marketing')).toEqual(['m2*', 'm1']);
    expect(await names('?category=business')).toEqual(['b2', 'b1']);
    expect(await names('?category=custom')).toEqual([]);
    expect(await names('?is_favorite=true')).toEqual(['m2*', 'b1']);
    expect(await names('?is_favorite=false')).toEqual(['b2', 'g1', 'm1']);
    expect(await names('?category=marketing&is_favorite=true')).toEqual(['m2*']);
    expect(await names('?category=business&is_favorite=false')).toEqual(['b2']);
    expect(await names('?category=general&is_favorite=true')).toEqual([]);
    expect(await names('?category=&is_favorite=true')).toEqual(['m2*', 'b1']);
  });

  it('a favorite toggled by update moves between the filtered lists', async () => {
    const res = await alice.put(`${alice.base}/${made.g1!.id}`, { is_favorite: true });
    expect(res.status).toBe(200);
    expect(await names('?is_favorite=true')).toEqual(['g1', 'm2*', 'b1']);
    await alice.put(`${alice.base}/${made.g1!.id}`, { is_favorite: false });
    expect(await names('?is_favorite=true')).toEqual(['m2*', 'b1']);
  });

  it('an unknown filter value is a 400, not a silently wrong list', async () => {
    const category = await alice.get(`${alice.base}?category=spam`);
    expect(category.status).toBe(400);
    expect(category.body).toEqual({
      success: false,
      error: MESSAGES.categoryInvalid,
      code: 'TEMPLATE_FILTER_INVALID',
      errors: { category: MESSAGES.categoryInvalid },
    });
    const favorite = await alice.get(`${alice.base}?is_favorite=yes`);
    expect(favorite.status).toBe(400);
    expect(favorite.body.errors).toEqual({ is_favorite: TEMPLATE_MESSAGES.favoriteFilterInvalid });
    const repeated = await alice.get(`${alice.base}?category=general&category=custom`);
    expect(repeated.status).toBe(400);
  });
});

describe('update', () => {
  it('a partial update changes only what is sent', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, {
      name: 'Base',
      description: 'desc',
      phone_numbers: ['85212345678'],
      category: 'personal',
    });
    const res = await alice.put(`${alice.base}/${t.id}`, { is_favorite: true });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.template).toEqual({ ...t, is_favorite: true, updated_at: expect.any(String) });
    expect(Date.parse(res.body.template.updated_at)).toBeGreaterThan(Date.parse(t.updated_at));
  });

  it('a full update replaces every field, ignores unknown ones, keeps id, usage and created_at', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, { name: 'Before' });
    await alice.post(`${alice.base}/${t.id}/use`);
    const res = await alice.put(`${alice.base}/${t.id}`, {
      name: 'After',
      description: 'new',
      message_content: 'New text',
      phone_numbers: '["85299998888"]',
      category: 'custom',
      is_favorite: true,
      usage_count: 0,
      id: UNKNOWN_ID,
    });
    expect(res.status).toBe(200);
    expect(res.body.template).toMatchObject({
      id: t.id,
      name: 'After',
      description: 'new',
      message_content: 'New text',
      phone_numbers: ['85299998888'],
      category: 'custom',
      is_favorite: true,
      usage_count: 1,
      created_at: t.created_at,
    });
  });

  it('an empty body changes nothing', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, { name: 'Same' });
    const res = await alice.put(`${alice.base}/${t.id}`, {});
    expect(res.status).toBe(200);
    expect(res.body.template).toEqual(t);
  });
});

describe('Idempotency-Key on create: a retry stores no second template', () => {
  const KEY = 'Idempotency-Key';
  const names = async (client: Client) =>
    (await client.get(client.base)).body.templates.map((t: Template) => t.name).sort();

  it('answers the template the first try stored, for a retry and for tries racing each other; another key is another template', async () => {
    const alice = await signIn('alice');
    const first = await alice.post(alice.base, { name: 'Promo', message_content: 'Hi' }, { [KEY]: 'save-1' });
    expect(first.status).toBe(201);
    const again = await alice.post(alice.base, { name: 'Promo', message_content: 'Hi' }, { [KEY]: 'save-1' });
    expect(again.body.template).toEqual(first.body.template);
    const racing = await Promise.all(
      Array.from({ length: 6 }, () =>
        alice.post(alice.base, { name: 'Race', message_content: 'Hi' }, { [KEY]: 'save-2' }),
      ),
    );
    expect(new Set(racing.map((r) => r.body.template.id)).size).toBe(1);
    await alice.post(alice.base, { name: 'Promo', message_content: 'Hi' }, { [KEY]: 'save-3' });
    expect(await names(alice)).toEqual(['Promo', 'Promo', 'Race']);
    // Keys are per user: Bob's 'save-1' is his own.
    const bob = await signIn('bob');
    expect(
      (await bob.post(bob.base, { name: 'Bob', message_content: 'Hi' }, { [KEY]: 'save-1' })).body.template.name,
    ).toBe('Bob');
    // A deleted template takes its key along: the key makes a new one.
    await alice.delete(`${alice.base}/${first.body.template.id}`);
    const after = await alice.post(alice.base, { name: 'Promo', message_content: 'Hi' }, { [KEY]: 'save-1' });
    expect(after.status).toBe(201);
    expect(after.body.template.id).not.toBe(first.body.template.id);
  });

  it('refuses a key that is not 1 to 200 printable characters, and stores nothing', async () => {
    const alice = await signIn('alice');
    for (const bad of ['x'.repeat(201), 'with space']) {
      const res = await alice.post(alice.base, { name: 'Nope', message_content: 'Hi' }, { [KEY]: bad });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        success: false,
        code: 'TEMPLATE_IDEMPOTENCY_KEY_INVALID',
        error: expect.stringMatching(/^Idempotency-Key must be 1 to 200 printable characters$/),
      });
    }
    expect(await names(alice)).toEqual([]);
  });

  it("a save answered 503 (the templates service stalled past the gateway's timeout, then wrote it) and saved again stores one template", async () => {
    const quick = await sys.start('gateway', { RPC_TIMEOUT_MS: '1000', RATE_LIMIT_BURST: '1000' }, 'gateway-quick');
    const templates = sys.services.find((s) => s.name === 'templates')!;
    const session = await devSignIn(quick.url, `stall.${++seq}@templates.test`, 'stall');
    const carol: Client = {
      ...api(quick.url, session.token),
      userId: session.userId,
      base: `/api/templates/${session.userId}`,
    };
    const body = { name: 'Stalled', message_content: 'Hi' };
    process.kill(templates.process.pid!, 'SIGSTOP');
    let stalled;
    try {
      stalled = await carol.post(carol.base, body, { [KEY]: 'stalled-1' });
    } finally {
      process.kill(templates.process.pid!, 'SIGCONT');
    }
    expect(stalled.status).toBe(503);
    // The write went through after all (the list shows it), and the user saves again, as the 503 told them to.
    for (let i = 0; i < 100 && (await names(carol)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await names(carol)).toEqual(['Stalled']);
    const retry = await carol.post(carol.base, body, { [KEY]: 'stalled-1' });
    expect([200, 201]).toContain(retry.status);
    expect(await names(carol)).toEqual(['Stalled']);
    await quick.stop();
  }, 60_000);
});

describe('delete', () => {
  it('removes the template; a second delete is a 404', async () => {
    const alice = await signIn('alice');
    const keep = await create(alice, { name: 'keep' });
    const gone = await create(alice, { name: 'gone' });
    const res = await alice.delete(`${alice.base}/${gone.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await alice.get(alice.base)).body.templates.map((t: Template) => t.id)).toEqual([keep.id]);
    expect((await alice.delete(`${alice.base}/${gone.id}`)).status).toBe(404);
    expect((await alice.post(`${alice.base}/${gone.id}/use`)).status).toBe(404);
  });
});

describe('categories and stats', () => {
  it('answer zeros for a new user', async () => {
    const alice = await signIn('alice');
    const categories = await alice.get(`${alice.base}/categories`);
    expect(categories.status).toBe(200);
    expect(categories.body).toEqual({
      success: true,
      categories: ['general', 'marketing', 'personal', 'business', 'custom'].map((category) => ({
        category,
        count: 0,
      })),
    });
    const stats = await alice.get(`${alice.base}/stats`);
    expect(stats.body).toEqual({
      success: true,
      stats: { total_templates: 0, favorite_templates: 0, categories: 0, total_usage: 0 },
    });
  });

  it('count each category, favorites, distinct categories and total usage', async () => {
    const alice = await signIn('alice');
    const a = await create(alice, { name: 'a', category: 'marketing', is_favorite: true });
    await create(alice, { name: 'b', category: 'marketing' });
    const c = await create(alice, { name: 'c', category: 'custom', is_favorite: true });
    await create(alice, { name: 'd' });
    for (const id of [a.id, a.id, c.id]) expect((await alice.post(`${alice.base}/${id}/use`)).status).toBe(200);

    const categories = await alice.get(`${alice.base}/categories`);
    expect(categories.body.categories).toEqual([
      { category: 'general', count: 1 },
      { category: 'marketing', count: 2 },
      { category: 'personal', count: 0 },
      { category: 'business', count: 0 },
      { category: 'custom', count: 1 },
    ]);
    const stats = await alice.get(`${alice.base}/stats`);
    expect(stats.body).toEqual({
      success: true,
      stats: { total_templates: 4, favorite_templates: 2, categories: 3, total_usage: 3 },
    });
  });
});

describe('use', () => {
  it('increments usage_count and answers the template', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, { name: 'Use me', phone_numbers: ['85212345678'] });
    const first = await alice.post(`${alice.base}/${t.id}/use`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, template: { ...t, usage_count: 1 } });
    const second = await alice.post(`${alice.base}/${t.id}/use`);
    expect(second.body.template.usage_count).toBe(2);
  });

  it('100 concurrent uses add exactly 100', async () => {
    const alice = await signIn('alice');
    const t = await create(alice, { name: 'Hot' });
    await alice.post(`${alice.base}/${t.id}/use`);
    const answers = await Promise.all(Array.from({ length: 100 }, () => alice.post(`${alice.base}/${t.id}/use`)));
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(200));
    // Each answer saw its own increment: the counts returned are exactly 2..101, once each.
    const seen = answers.map((r) => r.body.template.usage_count as number).sort((x, y) => x - y);
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
    const [stored] = (await alice.get(alice.base)).body.templates as Template[];
    expect(stored!.usage_count).toBe(101);
    expect((await alice.get(`${alice.base}/stats`)).body.stats.total_usage).toBe(101);
  });
});

describe('duplicate', () => {
  it('POST .../duplicate copies as "<name> (Copy)", not a favorite, usage 0, newest first', async () => {
    const alice = await signIn('alice');
    const source = await create(alice, {
      name: 'Promo',
      description: 'd',
      message_content: 'Body',
      phone_numbers: ['85212345678', '85287654321'],
      category: 'business',
      is_favorite: true,
    });
    await alice.post(`${alice.base}/${source.id}/use`);
    const res = await alice.post(`${alice.base}/${source.id}/duplicate`);
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const copy = res.body.template as Template;
    expect(copy).toEqual({
      ...source,
      id: expect.any(String),
      name: 'Promo (Copy)',
      is_favorite: false,
      usage_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(copy.id).not.toBe(source.id);
    const list = (await alice.get(alice.base)).body.templates as Template[];
    expect(list.map((t) => t.name)).toEqual(['Promo (Copy)', 'Promo']);
    expect(list[1]).toMatchObject({ is_favorite: true, usage_count: 1 });
  });

  it('a 100-character name is cut so the copy still fits', async () => {
    const alice = await signIn('alice');
    const source = await create(alice, { name: 'x'.repeat(100) });
    const res = await alice.post(`${alice.base}/${source.id}/duplicate`);
    expect(res.status).toBe(201);
    expect(res.body.template.name).toBe(`${'x'.repeat(93)} (Copy)`);
    const again = await alice.post(`${alice.base}/${res.body.template.id}/duplicate`);
    // A copy of a copy at the limit stays at the limit instead of growing past it.
    expect(again.body.template.name).toBe(`${'x'.repeat(93)} (Copy)`);
  });

  it('the web can also duplicate with a plain create using the shared name rule', async () => {
    const alice = await signIn('alice');
    const source = await create(alice, { name: 'y'.repeat(100), is_favorite: true });
    const res = await alice.post(alice.base, {
      ...source,
      name: duplicateTemplateName(source.name),
      is_favorite: false,
    });
    expect(res.status).toBe(201);
    expect(res.body.template).toMatchObject({ name: `${'y'.repeat(93)} (Copy)`, is_favorite: false, usage_count: 0 });
  });
});

describe("tenancy: another user's template is not found on every call", () => {
  let alice: Client;
  let bob: Client;
  let secret: Template;
  beforeAll(async () => {
    alice = await signIn('alice');
    bob = await signIn('bob');
    secret = await create(alice, {
      name: 'Secret',
      category: 'business',
      is_favorite: true,
      phone_numbers: ['85212345678'],
    });
    await create(bob, { name: 'Bob own', category: 'personal' });
  });

  const notFound = { success: false, error: TEMPLATE_MESSAGES.templateNotFound, code: 'TEMPLATE_NOT_FOUND' };

  it('update, delete, use and duplicate of her id answer 404 to him, the same as an unknown id', async () => {
    for (const id of [secret.id, UNKNOWN_ID]) {
      const calls = [
        bob.put(`${bob.base}/${id}`, { name: 'Hijacked' }),
        bob.put(`${bob.base}/${id}`, { is_favorite: 'yes' }),
        bob.delete(`${bob.base}/${id}`),
        bob.post(`${bob.base}/${id}/use`),
        bob.post(`${bob.base}/${id}/duplicate`),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(notFound);
      }
    }
  });

  it('a malformed template id is a 404 on every call, never a 500', async () => {
    for (const id of ['not-a-uuid', '123', `${UNKNOWN_ID}x`, "'; DROP TABLE templates; --"]) {
      const path = `${alice.base}/${encodeURIComponent(id)}`;
      for (const res of await Promise.all([
        alice.put(path, { name: 'x' }),
        alice.delete(path),
        alice.post(`${path}/use`),
        alice.post(`${path}/duplicate`),
      ])) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(notFound);
      }
    }
  });

  it('his list, categories and stats never include her templates', async () => {
    const list = await bob.get(bob.base);
    expect(list.body.templates.map((t: Template) => t.name)).toEqual(['Bob own']);
    expect((await bob.get(`${bob.base}?category=business`)).body.templates).toEqual([]);
    expect((await bob.get(`${bob.base}?is_favorite=true`)).body.templates).toEqual([]);
    const categories = (await bob.get(`${bob.base}/categories`)).body.categories as {
      category: string;
      count: number;
    }[];
    expect(categories.filter((c) => c.count > 0)).toEqual([{ category: 'personal', count: 1 }]);
    expect((await bob.get(`${bob.base}/stats`)).body.stats).toEqual({
      total_templates: 1,
      favorite_templates: 0,
      categories: 1,
      total_usage: 0,
    });
  });

  it('her path with his token is refused (403) on every call', async () => {
    const paths: [string, string][] = [
      ['GET', alice.base],
      ['POST', alice.base],
      ['PUT', `${alice.base}/${secret.id}`],
      ['DELETE', `${alice.base}/${secret.id}`],
      ['GET', `${alice.base}/categories`],
      ['GET', `${alice.base}/stats`],
      ['POST', `${alice.base}/${secret.id}/use`],
      ['POST', `${alice.base}/${secret.id}/duplicate`],
    ];
    for (const [method, path] of paths) {
      const res =
        method === 'GET'
          ? await bob.get(path)
          : method === 'POST'
            ? await bob.post(path, { name: 'x', message_content: 'y' })
            : method === 'PUT'
              ? await bob.put(path, { name: 'x' })
              : await bob.delete(path);
      expect([method, path, res.status]).toEqual([method, path, 403]);
    }
  });

  it('after all of that her template is untouched', async () => {
    const list = await alice.get(alice.base);
    expect(list.body.templates).toEqual([secret]);
  });

  it('no token is a 401', async () => {
    const anonymous = api(sys.gateway.url);
    expect((await anonymous.get(alice.base)).status).toBe(401);
    expect((await anonymous.post(`${alice.base}/${secret.id}/use`)).status).toBe(401);
  });
});

describe('API docs', () => {
  it('list every templates call with its body and answer schemas', async () => {
    const res = await fetch(`${sys.gateway.url}/api/docs-json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths['/api/templates/{userId}']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/templates/{userId}/{templateId}']!).sort()).toEqual(['delete', 'put']);
    for (const path of ['categories', 'stats'])
      expect(doc.paths[`/api/templates/{userId}/${path}`]).toHaveProperty('get');
    for (const path of ['use', 'duplicate'])
      expect(doc.paths[`/api/templates/{userId}/{templateId}/${path}`]).toHaveProperty('post');
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'CreateTemplateDto',
        'UpdateTemplateDto',
        'TemplateDto',
        'TemplateResponseDto',
        'TemplateErrorResponseDto',
      ]),
    );
  });
});

describe('NATS requests straight to the templates service', () => {
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let rpc: RpcClient;
  let carol: Client;

  beforeAll(async () => {
    nc = await connectNats(sys.nats.url, 'templates-rpc-test');
    rpc = new RpcClient(nc, { timeoutMs: 10_000 });
    carol = await signIn('carol');
  });
  afterAll(() => nc?.close());

  /** The error reply of a request, sent as is (the types would refuse these payloads). */
  async function refusal(key: RequestKey, payload: unknown): Promise<AppError> {
    try {
      await rpc.request(key, payload);
    } catch (err) {
      return err as AppError;
    }
    throw new Error(`${key} answered a malformed request`);
  }

  it('refuses a malformed envelope with a validation error naming the field, never an internal one', async () => {
    const cases: [RequestKey, unknown, string, string][] = [
      ['templates.stats', {}, 'userId', 'userId is required'],
      ['templates.categories', { userId: 12345678 }, 'userId', 'userId must be text'],
      [
        'templates.list',
        { userId: 'u'.repeat(10_000) },
        'userId',
        `userId must be at most ${LIMITS.userIdMaxLength} characters`,
      ],
      ['templates.use', { userId: carol.userId }, 'templateId', 'templateId is required'],
      ['templates.delete', { userId: carol.userId, templateId: '' }, 'templateId', 'templateId must not be empty'],
      [
        'templates.create',
        [{ userId: carol.userId, body: { name: 'x', message_content: 'y' } }],
        '',
        'The request must be an object',
      ],
    ];
    for (const [key, payload, field, message] of cases) {
      const err = await refusal(key, payload);
      expect(err).toBeInstanceOf(AppError);
      expect([key, err.kind, err.code, err.message]).toEqual([
        key,
        ErrorKind.Validation,
        CommonErrorCode.InvalidRequest,
        message,
      ]);
      expect(err.extra.errors).toEqual({ [field]: message });
      expect(JSON.stringify(err.toPayload())).not.toContain('12345678');
    }
  });

  it('still answers good requests (and the service is still up after the bad ones)', async () => {
    const made = await rpc.call('templates.create', {
      userId: carol.userId,
      body: { name: 'Over NATS', message_content: 'Hi' },
    });
    expect(made).toMatchObject({ name: 'Over NATS', usage_count: 0 });
    expect(await rpc.call('templates.use', { userId: carol.userId, templateId: made.id })).toMatchObject({
      id: made.id,
      usage_count: 1,
    });
    expect(await rpc.call('templates.stats', { userId: carol.userId })).toMatchObject({
      total_templates: 1,
      total_usage: 1,
    });
    // A body the envelope lets through is still the service's to judge, in its own words.
    const form = await refusal('templates.create', { userId: carol.userId, body: { message_content: 'Hi' } });
    expect([form.kind, form.code]).not.toEqual([ErrorKind.Validation, CommonErrorCode.InvalidRequest]);
    expect(form.extra.errors).toHaveProperty('name', MESSAGES.templateNameRequired);
  });
});
