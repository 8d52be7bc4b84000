import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { QueryFailedError } from 'typeorm';
import { loggerParams, redactUrl, serializeError } from '../logging/logging.js';

describe('log redaction', () => {
  it('drops the bound parameters and the Postgres detail of a failed query', () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "x"'), {
      code: '23505',
      detail: 'Key (phone)=(85291234567) already exists.',
    });
    const err = new QueryFailedError(
      'INSERT INTO t (phone, text) VALUES ($1, $2)',
      ['85291234567', 'Your secret order'],
      driverError,
    );
    const chunks: string[] = [];
    const params = loggerParams('svc', 'info', false).pinoHttp as {
      serializers: Record<string, (v: unknown) => unknown>;
      redact: { paths: string[] };
    };
    const logger = pino(
      { serializers: params.serializers, redact: params.redact },
      new Writable({ write: (c, _e, cb) => (chunks.push(String(c)), cb()) }),
    );
    logger.error({ err }, 'insert failed');
    const line = chunks.join('');
    expect(line).toContain('INSERT INTO t');
    expect(line).not.toContain('85291234567');
    expect(line).not.toContain('Your secret order');
    expect(serializeError(err)).not.toHaveProperty('parameters');
  });

  it("logs a request's route parameters only when they are ids: a phone, or a catch-all's copy of the path, is replaced", () => {
    const chunks: string[] = [];
    const params = loggerParams('svc', 'info', true).pinoHttp as {
      serializers: Record<string, (v: unknown) => unknown>;
      redact: { paths: string[]; censor: string };
    };
    const logger = pino(
      { serializers: params.serializers, redact: params.redact },
      new Writable({ write: (c, _e, cb) => (chunks.push(String(c)), cb()) }),
    );
    const req = {
      method: 'DELETE',
      url: '/API/opt-outs/user_1/+85291234567',
      params: {
        splat: ['API', 'opt-outs', 'user_1', '+85291234567'],
        userId: 'user_1',
        jobId: 'j1',
        phone: '91234567',
      },
      query: { q: '9123', limit: '20' },
      headers: {},
    };
    logger.error({ req }, 'request failed');
    const line = JSON.parse(chunks.join('')) as {
      req: { url: string; params: Record<string, unknown>; query: Record<string, unknown> };
    };
    expect(line.req.params).toEqual({ splat: '[redacted]', userId: 'user_1', jobId: 'j1', phone: '[redacted]' });
    expect(line.req.query).toEqual({ q: '[redacted]', limit: '20' });
    expect(line.req.url).toBe('/API/opt-outs/user_1/[redacted]');
    expect(JSON.stringify(line)).not.toMatch(/9123/);
  });

  it('redacts sensitive query-string values in URLs', () => {
    expect(redactUrl('/job-logs/1?since=5&token=abc.def&__session=x')).toBe(
      '/job-logs/1?since=5&token=[redacted]&__session=[redacted]',
    );
    expect(redactUrl('/healthz')).toBe('/healthz');
  });
});
