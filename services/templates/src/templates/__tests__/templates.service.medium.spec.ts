import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ErrorKind, LIMITS, MESSAGES, TEMPLATE_MESSAGES, TemplatesErrorCode, type Template } from '@bns/contracts';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { TemplateMedia } from '../template-media.js';
import { TemplatesRepository } from '../templates.repository.js';
import { TemplatesService } from '../templates.service.js';

/** The templates service in-process against a real Postgres: CRUD, filters, counts and tenancy. */

let app: InProcess;
let templates: TemplatesService;

beforeAll(async () => {
  // Templates without an attachment never ask the jobs service (attachments: templates.integration-spec).
  const noAttachments = {
    hold: () => Promise.reject(new Error('no attachment in these tests')),
    release: () => Promise.reject(new Error('no attachment in these tests')),
  };
  app = await inProcess([TemplatesRepository, TemplatesService, { provide: TemplateMedia, useValue: noAttachments }]);
  templates = app.module.get(TemplatesService);
}, 60_000);

afterAll(() => app?.stop());

const newUser = () => `user_${randomUUID()}`;
const notFound = { code: TemplatesErrorCode.NotFound, message: TEMPLATE_MESSAGES.templateNotFound };

describe('template CRUD', () => {
  it('creates with defaults, reads it back in the list, updates part of it, deletes it', async () => {
    const u = newUser();
    const created = await templates.create(u, {
      name: '  Welcome ',
      message_content: 'Hi *there*',
      phone_numbers: '["85212345678"]',
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Welcome',
      description: '',
      message_content: 'Hi *there*',
      phone_numbers: ['85212345678'],
      category: 'general',
      is_favorite: false,
      usage_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await templates.list({ userId: u })).toEqual([created]);

    const favorite = await templates.update(u, created.id, { is_favorite: true });
    expect(favorite).toEqual({ ...favorite, ...created, is_favorite: true, updated_at: expect.any(String) });
    expect(Date.parse(favorite.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    // An empty update changes nothing and answers the template as it is.
    expect(await templates.update(u, created.id, {})).toEqual(favorite);

    expect(await templates.remove(u, created.id)).toEqual({ id: created.id });
    expect(await templates.list({ userId: u })).toEqual([]);
    await expect(templates.remove(u, created.id)).rejects.toMatchObject(notFound);
  });

  it('lists newest first, by category and favorites', async () => {
    const u = newUser();
    const a = await templates.create(u, { name: 'a', message_content: 'x', category: 'marketing', is_favorite: true });
    const b = await templates.create(u, { name: 'b', message_content: 'x', category: 'marketing' });
    const c = await templates.create(u, { name: 'c', message_content: 'x', category: 'custom' });
    const names = (list: Template[]) => list.map((t) => t.name);
    expect(names(await templates.list({ userId: u }))).toEqual([c, b, a].map((t) => t.name));
    expect(names(await templates.list({ userId: u, category: 'marketing' }))).toEqual(['b', 'a']);
    expect(names(await templates.list({ userId: u, is_favorite: 'true' }))).toEqual(['a']);
    expect(names(await templates.list({ userId: u, category: 'marketing', is_favorite: 'false' }))).toEqual(['b']);
    await expect(templates.list({ userId: u, category: 'spam' })).rejects.toMatchObject({
      code: TemplatesErrorCode.InvalidFilter,
    });
  });

  it('refuses bad input with the spec messages and stores nothing', async () => {
    const u = newUser();
    await expect(templates.create(u, { name: '', message_content: 'm'.repeat(1001) })).rejects.toMatchObject({
      code: TemplatesErrorCode.InvalidTemplate,
      message: MESSAGES.fixFormErrors,
      extra: {
        errors: {
          name: 'Template name is required',
          message_content: 'Message content must be 1000 characters or less',
        },
      },
    });
    const t = await templates.create(u, { name: 'ok', message_content: 'ok' });
    await expect(templates.update(u, t.id, { phone_numbers: ['12'] })).rejects.toMatchObject({
      code: TemplatesErrorCode.InvalidTemplate,
    });
    expect(await templates.list({ userId: u })).toEqual([t]);
  });

  it('duplicates as "<name> (Copy)", not a favorite, usage 0', async () => {
    const u = newUser();
    const t = await templates.create(u, {
      name: 'Promo',
      message_content: 'Sale',
      category: 'business',
      is_favorite: true,
      phone_numbers: ['85212345678'],
    });
    await templates.use(u, t.id);
    const copy = await templates.duplicate(u, t.id);
    expect(copy).toMatchObject({
      name: 'Promo (Copy)',
      message_content: 'Sale',
      category: 'business',
      is_favorite: false,
      usage_count: 0,
      phone_numbers: ['85212345678'],
    });
    expect(copy.id).not.toBe(t.id);
  });

  it('use adds one per call, also when calls race, and leaves updated_at alone', async () => {
    const u = newUser();
    const t = await templates.create(u, { name: 'Hot', message_content: 'x' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => templates.use(u, t.id)));
    expect(answers.map((a) => a.usage_count).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(answers[0]!.updated_at).toBe(t.updated_at);
    expect(await templates.stats(u)).toEqual({
      total_templates: 1,
      favorite_templates: 0,
      categories: 1,
      total_usage: 20,
    });
  });

  it('counts every category in SPEC order, and stats', async () => {
    const u = newUser();
    expect(await templates.categories(u)).toEqual(
      ['general', 'marketing', 'personal', 'business', 'custom'].map((category) => ({ category, count: 0 })),
    );
    expect(await templates.stats(u)).toEqual({
      total_templates: 0,
      favorite_templates: 0,
      categories: 0,
      total_usage: 0,
    });
    await templates.create(u, { name: 'a', message_content: 'x', category: 'custom', is_favorite: true });
    await templates.create(u, { name: 'b', message_content: 'x', category: 'custom' });
    await templates.create(u, { name: 'c', message_content: 'x' });
    expect(await templates.categories(u)).toEqual([
      { category: 'general', count: 1 },
      { category: 'marketing', count: 0 },
      { category: 'personal', count: 0 },
      { category: 'business', count: 0 },
      { category: 'custom', count: 2 },
    ]);
    expect(await templates.stats(u)).toEqual({
      total_templates: 3,
      favorite_templates: 1,
      categories: 2,
      total_usage: 0,
    });
  });

  it('an unknown or malformed id is not found, never an error of the database', async () => {
    const u = newUser();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', "'; DROP TABLE templates; --", '']) {
      await expect(templates.update(u, id, { name: 'x' })).rejects.toMatchObject(notFound);
      await expect(templates.remove(u, id)).rejects.toMatchObject(notFound);
      await expect(templates.duplicate(u, id)).rejects.toMatchObject(notFound);
      await expect(templates.use(u, id)).rejects.toMatchObject(notFound);
    }
  });
});

describe('another user', () => {
  it("never finds, changes, uses, copies or deletes someone else's template", async () => {
    const [ann, bob] = [newUser(), newUser()];
    const hers = await templates.create(ann, {
      name: 'Ann only',
      message_content: 'secret',
      category: 'personal',
      is_favorite: true,
    });
    await templates.create(bob, { name: 'Bob own', message_content: 'x' });

    await expect(templates.update(bob, hers.id, { name: 'stolen' })).rejects.toMatchObject(notFound);
    await expect(templates.update(bob, hers.id, { name: '' })).rejects.toMatchObject(notFound);
    await expect(templates.use(bob, hers.id)).rejects.toMatchObject(notFound);
    await expect(templates.duplicate(bob, hers.id)).rejects.toMatchObject(notFound);
    await expect(templates.remove(bob, hers.id)).rejects.toMatchObject(notFound);

    expect((await templates.list({ userId: bob })).map((t) => t.name)).toEqual(['Bob own']);
    expect(await templates.list({ userId: bob, is_favorite: 'true' })).toEqual([]);
    expect((await templates.categories(bob)).filter((c) => c.count > 0)).toEqual([{ category: 'general', count: 1 }]);
    expect(await templates.stats(bob)).toEqual({
      total_templates: 1,
      favorite_templates: 0,
      categories: 1,
      total_usage: 0,
    });
    // Hers is untouched.
    expect(await templates.list({ userId: ann })).toEqual([hers]);
  });
});

describe('templates per user', () => {
  const MAX = LIMITS.templatesPerUserMax;
  const full = {
    kind: ErrorKind.Conflict,
    code: TemplatesErrorCode.LimitReached,
    message: TEMPLATE_MESSAGES.limitReached,
  };
  const fill = (u: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => templates.create(u, { name: `t${i}`, message_content: 'x' })));

  it('refuses a create or a duplicate past the limit, in plain words, and stores nothing', async () => {
    const u = newUser();
    const [first] = await fill(u, MAX);
    await expect(templates.create(u, { name: 'more', message_content: 'x' })).rejects.toMatchObject(full);
    await expect(templates.duplicate(u, first!.id)).rejects.toMatchObject(full);
    // An unknown source is still "not found", a bad form still a form error.
    await expect(templates.duplicate(u, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject(notFound);
    await expect(templates.create(u, { name: '' })).rejects.toMatchObject({ code: TemplatesErrorCode.InvalidTemplate });
    expect((await templates.stats(u)).total_templates).toBe(MAX);
    await templates.remove(u, first!.id);
    expect(await templates.create(u, { name: 'room again', message_content: 'x' })).toMatchObject({
      name: 'room again',
    });
  });

  it(`lets exactly one of many creates and duplicates racing at ${MAX - 1} through`, async () => {
    const u = newUser();
    const [first] = await fill(u, MAX - 1);
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, (_, i) => templates.create(u, { name: `race ${i}`, message_content: 'x' })),
      ...Array.from({ length: 6 }, () => templates.duplicate(u, first!.id)),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect(r.reason).toMatchObject(full);
    expect((await templates.stats(u)).total_templates).toBe(MAX);
  });
});
