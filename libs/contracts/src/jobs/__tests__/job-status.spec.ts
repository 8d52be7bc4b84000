import { describe, expect, it } from '@jest/globals';
import { checkRequest } from '../../registry/requests.js';
import { JOB_STATUS_REVALIDATION } from '../limits.js';
import { jobStatusEtag } from '../subjects.js';
import { ifNoneMatchVersions } from '../validation.js';

const A = 'AAAAAAAAAAAAAAAAAAAA-_';
const B = 'bbbbbbbbbbbbbbbbbbbb01';

describe('ifNoneMatchVersions', () => {
  it('reads what a browser sends back: the ETag it was given, weak or compared weakly', () => {
    expect(ifNoneMatchVersions(jobStatusEtag(A))).toEqual([A]);
    expect(ifNoneMatchVersions(`"${A}"`)).toEqual([A]);
    expect(ifNoneMatchVersions(` W/"${A}" , "${B}",W/"${A}"`)).toEqual([A, B]);
    expect(ifNoneMatchVersions(' * ')).toEqual(['*']);
  });

  it('skips tags that are not ours (a body hash Express sent before), and says none when none is ours', () => {
    expect(ifNoneMatchVersions(`W/"1f-abcdef", W/"${A}"`)).toEqual([A]);
    expect(ifNoneMatchVersions('W/"1f-abcdef"')).toBeUndefined();
    expect(ifNoneMatchVersions(`W/"${A}x"`)).toBeUndefined();
    expect(ifNoneMatchVersions('W/"a,b"')).toBeUndefined();
  });

  it('ignores an absent, malformed or oversized header, as if there were none', () => {
    for (const header of [
      undefined,
      null,
      42,
      ['x'],
      '',
      '   ',
      A,
      `W/${A}`,
      `"${A}`,
      `"${A}" "${B}"`,
      `"${A}",,`,
      `W/"${A}"; x`,
      '**',
      `*, "${A}"`,
    ]) {
      expect(ifNoneMatchVersions(header)).toBeUndefined();
    }
    const long = Array.from({ length: 40 }, () => `"${A}"`).join(', ');
    expect(long.length).toBeGreaterThan(JOB_STATUS_REVALIDATION.ifNoneMatchMaxLength);
    expect(ifNoneMatchVersions(long)).toBeUndefined();
    expect(ifNoneMatchVersions(`W/"${'x'.repeat(100_000)}"`)).toBeUndefined();
  });

  it('forwards at most maxVersions, which the request schema accepts', () => {
    const many = Array.from({ length: 12 }, (_, i) => `"${String(i).padStart(22, 'v')}"`).join(',');
    const versions = ifNoneMatchVersions(many)!;
    expect(versions).toHaveLength(JOB_STATUS_REVALIDATION.maxVersions);
    expect(checkRequest('jobs.status', { userId: 'u', jobId: 'j', ifNoneMatch: versions }).ok).toBe(true);
  });
});

describe('jobs.status request', () => {
  it('takes our versions or *, and refuses anything else in ifNoneMatch', () => {
    expect(checkRequest('jobs.status', { userId: 'u', jobId: 'j', ifNoneMatch: [A, '*'] })).toEqual({
      ok: true,
      value: { userId: 'u', jobId: 'j', ifNoneMatch: [A, '*'] },
    });
    expect(checkRequest('jobs.status', { userId: 'u', jobId: 'j' }).ok).toBe(true);
    for (const ifNoneMatch of [[], ['W/"x"'], [`W/"${A}"`], 'abc', [A.repeat(2)], Array.from({ length: 9 }, () => A)]) {
      expect(checkRequest('jobs.status', { userId: 'u', jobId: 'j', ifNoneMatch }).ok).toBe(false);
    }
  });
});
