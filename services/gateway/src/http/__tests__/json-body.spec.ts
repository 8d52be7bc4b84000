import { describe, expect, it } from '@jest/globals';
import { jsonDepthExceeds } from '../json-body.js';

const bytes = (text: string) => Buffer.from(text);

describe('jsonDepthExceeds', () => {
  it('counts nesting of arrays and objects', () => {
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(bytes('[[],[],[]]'), 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"\\"[[[[","b":1}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"\\\\","b":[[1]]}'), 2)).toBe(true);
  });

  it('scans a million levels without recursion', () => {
    const deep = bytes('['.repeat(1_000_000) + ']'.repeat(1_000_000));
    expect(jsonDepthExceeds(deep, 64)).toBe(true);
    expect(jsonDepthExceeds(bytes(`${'['.repeat(64)}${']'.repeat(64)}`), 64)).toBe(false);
  });
});
