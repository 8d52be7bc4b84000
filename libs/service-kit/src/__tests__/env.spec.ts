import { describe, expect, it } from '@jest/globals';
import { env, EnvError, loadEnv } from '../config/env.js';

const spec = {
  NATS_URL: env.url('NATS URL', ['nats'], 'nats://127.0.0.1:4222'),
  SHARDS: env.int('shards', 2, { min: 1, max: 8 }),
  DATABASE_URL: env.url('db', ['postgres']),
  DEBUG: env.bool('debug', false),
  MODE: env.oneOf('mode', ['a', 'b'] as const, 'a'),
  NOTE: env.optionalStr('note'),
  ORIGINS: env.list('origins'),
};

describe('loadEnv', () => {
  it('applies defaults and parses values into types', () => {
    const e = loadEnv(spec, { DATABASE_URL: 'postgres://x/y', SHARDS: '3', DEBUG: 'yes', ORIGINS: 'a, b,,c' });
    expect(e).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      SHARDS: 3,
      DATABASE_URL: 'postgres://x/y',
      DEBUG: true,
      MODE: 'a',
      NOTE: undefined,
      ORIGINS: ['a', 'b', 'c'],
    });
  });

  it('names every bad or missing variable in one error', () => {
    let error: EnvError | undefined;
    try {
      loadEnv(spec, { SHARDS: '9', NATS_URL: 'http://x', DEBUG: 'maybe', MODE: 'c' });
    } catch (e) {
      error = e as EnvError;
    }
    expect(error).toBeInstanceOf(EnvError);
    const text = error!.problems.join('\n');
    expect(text).toMatch(/^SHARDS must be ≤ 8, got 9/m);
    expect(text).toMatch(/^NATS_URL must use nats/m);
    expect(text).toMatch(/^DATABASE_URL is required/m);
    expect(text).toMatch(/^DEBUG must be true or false/m);
    expect(text).toMatch(/^MODE must be one of a, b/m);
    expect(error!.problems).toHaveLength(5);
  });

  it('refuses a non-integer', () => {
    expect(() => loadEnv(spec, { DATABASE_URL: 'postgres://x', SHARDS: '2.5' })).toThrow(/SHARDS must be an integer/);
  });

  it('takes an IP address to listen on, or none (every address)', () => {
    const listen = { BIND_ADDRESS: env.optionalIp('address') };
    expect(loadEnv(listen, {}).BIND_ADDRESS).toBeUndefined();
    expect(loadEnv(listen, { BIND_ADDRESS: ' 127.0.0.1 ' }).BIND_ADDRESS).toBe('127.0.0.1');
    expect(loadEnv(listen, { BIND_ADDRESS: '::' }).BIND_ADDRESS).toBe('::');
    expect(() => loadEnv(listen, { BIND_ADDRESS: 'localhost' })).toThrow(
      /BIND_ADDRESS must be an IP address such as 127\.0\.0\.1, 0\.0\.0\.0 or ::, got "localhost"/,
    );
  });
});
