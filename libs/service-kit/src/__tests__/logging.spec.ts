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
    const err = new QueryFailedError('INSERT INTO t (phone, text) VALUES ($1, $2)', ['85291234567', 'Your secret order'], driverError);
    const chunks: string[] = [];
    const params = loggerParams('svc', 'info', false).pinoHttp as { serializers: Record<string, (v: unknown) => unknown>; redact: { paths: string[] } };
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

  it('redacts sensitive query-string values in URLs', () => {
    expect(redactUrl('/job-logs/1?since=5&token=abc.def&__session=x')).toBe('/job-logs/1?since=5&token=[redacted]&__session=[redacted]');
    expect(redactUrl('/healthz')).toBe('/healthz');
  });
});
