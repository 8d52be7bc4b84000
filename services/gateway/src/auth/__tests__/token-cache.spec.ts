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
    const verifier = new TokenVerifier(keys, { issuer: 'iss', authorizedParties: [], clockToleranceS: 0, cacheMax: 10 });
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer('iss').setSubject('user_a').setIssuedAt().setExpirationTime('1h').sign(privateKey);
    for (let i = 0; i < 5; i++) expect((await verifier.verify(token)).userId).toBe('user_a');
    expect(keyLookups).toBe(1);
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
