import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LinksRepository } from '../links.repository.js';
import { startHarness, type Harness } from './harness.js';

describe('LinksRepository (in-process, real Postgres)', () => {
  let h: Harness;
  let links: LinksRepository;

  beforeAll(async () => {
    h = await startHarness([LinksRepository]);
    links = h.get(LinksRepository);
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('saves, replaces, lists by engine in link order, and deletes a link', async () => {
    const a = {
      userId: 'user_a',
      sessionId: '00000000-0000-4000-8000-00000000000a',
      engine: 'webjs' as const,
      phoneNumber: '85290000001',
    };
    const b = {
      userId: 'user_b',
      sessionId: '00000000-0000-4000-8000-00000000000b',
      engine: 'webjs' as const,
      phoneNumber: '85290000002',
    };
    await links.save(a);
    await links.save(b);
    await links.save({
      userId: 'user_c',
      sessionId: '00000000-0000-4000-8000-00000000000c',
      engine: 'simulated',
      phoneNumber: '85290000003',
    });
    expect(await links.find('user_a')).toEqual(expect.objectContaining(a));
    expect((await links.all('webjs')).map((l) => l.userId)).toEqual(['user_a', 'user_b']);

    const relinked = { ...a, sessionId: '00000000-0000-4000-8000-0000000000aa', phoneNumber: '85290000009' };
    await links.save(relinked);
    expect(await links.find('user_a')).toEqual(expect.objectContaining(relinked));
    expect((await links.all('webjs')).map((l) => l.userId)).toEqual(['user_b', 'user_a']);

    expect(await links.delete('user_b')).toBe(1);
    expect(await links.delete('user_b')).toBe(0);
    expect(await links.find('user_b')).toBeUndefined();
  });

  it('claims the welcome message once per link; a new link may claim it again', async () => {
    const link = {
      userId: 'user_w',
      sessionId: '00000000-0000-4000-8000-000000000001',
      engine: 'simulated' as const,
      phoneNumber: '85290000004',
    };
    await links.save(link);
    expect(await links.claimWelcome(link.userId, 'ffffffff-0000-4000-8000-000000000001')).toBe(false); // another link's id
    const claims = await Promise.all([
      links.claimWelcome(link.userId, link.sessionId),
      links.claimWelcome(link.userId, link.sessionId),
    ]);
    expect(claims.sort()).toEqual([false, true]);
    expect(await links.claimWelcome(link.userId, link.sessionId)).toBe(false);

    const next = { ...link, sessionId: '00000000-0000-4000-8000-000000000002' };
    await links.save(next);
    expect(await links.claimWelcome(next.userId, next.sessionId)).toBe(true);
  });
});
