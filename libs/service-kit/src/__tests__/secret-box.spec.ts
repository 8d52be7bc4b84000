import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { SecretBox, SecretKeyMismatchError, SecretKeyRing, secretKeyProblem } from '../crypto/secret-box.js';

const key = () => randomBytes(32).toString('base64');

describe('SecretBox and SecretKeyRing', () => {
  it('takes 32 bytes as base64 or hex and names the variable otherwise', () => {
    expect(secretKeyProblem(key(), 'SESSION_STATE_KEY')).toBeUndefined();
    expect(secretKeyProblem(randomBytes(32).toString('hex'), 'SESSION_STATE_KEY')).toBeUndefined();
    expect(secretKeyProblem(randomBytes(16).toString('base64'), 'SESSION_STATE_KEY')).toBe(
      'SESSION_STATE_KEY must be 32 random bytes, base64 (44 characters) or hex (64)',
    );
    expect(() => new SecretBox('short', 'X_KEY')).toThrow('X_KEY must be 32 random bytes');
  });

  it('seals bytes so that only the same key opens them, with a fresh IV each time', () => {
    const box = new SecretBox(key(), 'K');
    const plain = Buffer.from('PK\u0003\u0004 a profile with 85291234567 in it');
    const a = box.sealBytes(plain);
    const b = box.sealBytes(plain);
    expect(SecretBox.isSealedBytes(a)).toBe(true);
    expect(SecretBox.isSealedBytes(plain)).toBe(false);
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('85291234567'))).toBe(false);
    expect(box.openBytes(a).equals(plain)).toBe(true);
    expect(() => new SecretBox(key(), 'K').openBytes(a)).toThrow(SecretKeyMismatchError);
    const tampered = Buffer.from(a);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.openBytes(tampered)).toThrow(SecretKeyMismatchError);
    expect(box.open(box.seal('whsec_text'))).toBe('whsec_text');
  });

  it('a ring opens under the key in force or a previous one, and says which', () => {
    const oldKey = new SecretBox(key(), 'OLD');
    const ring = new SecretKeyRing(new SecretBox(key(), 'NEW'), [oldKey]);
    const plain = Buffer.from('login');
    expect(ring.openBytes(ring.sealBytes(plain))).toEqual({ plain, rotated: false });
    expect(ring.openBytes(oldKey.sealBytes(plain))).toEqual({ plain, rotated: true });
    expect(() => ring.openBytes(new SecretBox(key(), 'OTHER').sealBytes(plain))).toThrow(SecretKeyMismatchError);
  });
});
