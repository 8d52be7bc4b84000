import { describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { isUuid } from '@bns/contracts';
import { isMintedJobId, JOB_ID_KEY_BYTES, jobMayExist, mintJobId } from '../job-ids.js';

const key = randomBytes(JOB_ID_KEY_BYTES);
const otherKey = randomBytes(JOB_ID_KEY_BYTES);

describe('job ids the gateway can check from the id alone', () => {
  it('mints version 8 UUIDs of the RFC 9562 variant, each new', () => {
    const ids = Array.from({ length: 2000 }, () => mintJobId(key, 'user_a'));
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('an id checks for its own user under its own key only, in any case', () => {
    const id = mintJobId(key, 'user_a');
    expect(isMintedJobId(key, 'user_a', id)).toBe(true);
    expect(isMintedJobId(key, 'user_a', id.toUpperCase())).toBe(true);
    expect(isMintedJobId(key, 'user_b', id)).toBe(false);
    expect(isMintedJobId(otherKey, 'user_a', id)).toBe(false);
    // A user id that is a prefix of another's, and one with the separator in it, are not confused.
    expect(isMintedJobId(key, 'user_', id)).toBe(false);
    expect(isMintedJobId(key, 'user_a\n', id)).toBe(false);
  });

  it('any one changed digit fails the check', () => {
    const id = mintJobId(key, 'user_a');
    for (let i = 0; i < id.length; i++) {
      if (id[i] === '-' || i === 14) continue;
      const changed = `${id.slice(0, i)}${id[i] === '0' ? '1' : '0'}${id.slice(i + 1)}`;
      expect([i, isMintedJobId(key, 'user_a', changed)]).toEqual([i, false]);
    }
  });

  it('jobMayExist: not a UUID never; a version 8 id by its MAC; another version only while legacy ids exist', () => {
    const mine = mintJobId(key, 'user_a');
    const v4 = randomUUID();
    for (const legacyIds of [false, true]) {
      const scheme = { key, legacyIds };
      expect(jobMayExist(scheme, 'user_a', mine)).toBe(true);
      expect(jobMayExist(scheme, 'user_b', mine)).toBe(false);
      expect(
        jobMayExist(
          scheme,
          'user_a',
          mine.replace(/.$/, (c) => (c === 'f' ? 'e' : 'f')),
        ),
      ).toBe(false);
      expect(jobMayExist(scheme, 'user_a', v4)).toBe(legacyIds);
      for (const bad of ['', 'abc', `${mine}x`, mine.replaceAll('-', ''), '../etc/passwd', `${mine.slice(0, 35)}%`]) {
        expect(jobMayExist(scheme, 'user_a', bad)).toBe(false);
      }
    }
  });
});
