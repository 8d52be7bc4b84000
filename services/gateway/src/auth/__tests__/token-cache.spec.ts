import { describe, expect, it } from '@jest/globals';
import { generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { ClaimsCache } from '../claims-cache.js';
import { TokenVerifier } from '../token-verifier.js';

describe('verified-token cache', () => {
  it('verifies a token once, then answers from the cache until it expires', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    let keyLookups = 0;
    const keys = async () => {
      keyLookups++;
      return publicKey as CryptoKey;
    };
    const verifier = new TokenVerifier(keys, {
      issuer: 'iss',
      authorizedParties: [],
      clockToleranceS: 0,
      cacheMax: 10,
    });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer('iss')
      .setSubject('user_a')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    for (let i = 0; i < 5; i++) expect((await verifier.verify(token)).userId).toBe('user_a');
    expect(keyLookups).toBe(1);
  });

  it('answers a verified token from `cached` without a promise, and nothing for one never verified or expired', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const verifier = new TokenVerifier(publicKey, {
      issuer: 'iss',
      authorizedParties: [],
      clockToleranceS: 0,
      cacheMax: 10,
    });
    const sign = (exp: string | number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer('iss')
        .setSubject('user_a')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(privateKey);
    const token = await sign('1h');
    expect(verifier.cached(token)).toBeUndefined();
    await verifier.verify(token);
    expect(verifier.cached(token)?.userId).toBe('user_a');
    // Expiring within the second: verified now, gone from the cache once its exp has passed.
    const brief = await sign(Math.floor(Date.now() / 1000) + 1);
    await verifier.verify(brief);
    expect(verifier.cached(brief)?.userId).toBe('user_a');
    await new Promise((r) => setTimeout(r, 2100));
    expect(verifier.cached(brief)).toBeUndefined();
    await expect(verifier.verify(brief)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('answers only the very token it was given, not another one ending the same way', () => {
    const cache = new ClaimsCache(10);
    const tail = 'x'.repeat(40);
    cache.set(`aaa.${tail}`, { userId: 'a', expiresAtMs: Number.MAX_SAFE_INTEGER }, Number.MAX_SAFE_INTEGER);
    expect(cache.get(`aaa.${tail}`)?.userId).toBe('a');
    expect(cache.get(`bbb.${tail}`)).toBeUndefined();
    expect(cache.get(tail)).toBeUndefined();
  });

  it('keeps an entry used during the last max/2 insertions, without moving it on every hit', () => {
    const cache = new ClaimsCache(4);
    const user = (userId: string) => ({ userId, expiresAtMs: Number.MAX_SAFE_INTEGER });
    for (const t of ['a', 'b', 'c', 'd']) cache.set(t, user(t), Number.MAX_SAFE_INTEGER);
    expect(cache.get('a')?.userId).toBe('a'); // the oldest, used: moved to the end
    cache.set('e', user('e'), Number.MAX_SAFE_INTEGER); // b goes
    expect(cache.get('b')).toBeUndefined();
    for (let i = 0; i < 100; i++) expect(cache.get('e')?.userId).toBe('e'); // recent: found where it is
    cache.set('f', user('f'), Number.MAX_SAFE_INTEGER); // c goes
    cache.set('g', user('g'), Number.MAX_SAFE_INTEGER); // d goes
    expect(['a', 'c', 'd', 'e', 'f', 'g'].map((t) => cache.get(t)?.userId)).toEqual([
      'a',
      undefined,
      undefined,
      'e',
      'f',
      'g',
    ]);
    expect(cache.size).toBe(4);
  });

  it('forgets entries at their expiry and keeps at most `max`, dropping the least recently used', () => {
    let now = 0;
    const cache = new ClaimsCache(2, () => now);
    const user = (userId: string) => ({ userId, expiresAtMs: 1000 });
    cache.set('a', user('a'), 1000);
    cache.set('b', user('b'), 1000);
    expect(cache.get('a')?.userId).toBe('a'); // a is now the most recent
    cache.set('c', user('c'), 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.userId).toBe('a');
    now = 1000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});
