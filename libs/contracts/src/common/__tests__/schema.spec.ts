import { describe, expect, it } from '@jest/globals';
import { checkStartJob } from '../../jobs/validation.js';
import { JobsErrorCode } from '../../jobs/errors.js';
import { validateTemplateCreate } from '../../templates/validation.js';
import { TemplateCreateSchema } from '../../templates/schemas.js';
import { LIMITS } from '../limits.js';
import { normalizePhone } from '../phone.js';
import { backoffMs, withRetry } from '../retry.js';
import { openApiSchemaOf, REQUEST_MESSAGES } from '../schema.js';
import { idempotencyKeyOf, parseIdempotencyKey } from '../../sessions/messages.js';

describe('one phone normaliser', () => {
  it('keeps each form', () => {
    expect(normalizePhone('+852 9123-4567', 'hk')).toBe('91234567');
    expect(normalizePhone('9123 4567', 'international')).toBe('85291234567');
    expect(normalizePhone('+44 20 7946 0958', 'stored')).toBe('442079460958');
    expect(normalizePhone('1234', 'stored')).toBeUndefined();
    expect(normalizePhone({}, 'hk')).toBeUndefined();
  });
});

describe('start body: every field checked, NUL refused', () => {
  const ok = { message: 'Hi {{name}}', recipients: [{ phone: '91234567', variables: { name: 'Ann' } }] };
  it('refuses NUL in the message and in a variable with a clear message', () => {
    expect(checkStartJob({ ...ok, message: 'Hi\u0000' })).toMatchObject({
      ok: false,
      code: JobsErrorCode.InvalidField,
      message: REQUEST_MESSAGES.nulCharacter('message'),
    });
    const variable = checkStartJob({ ...ok, recipients: [{ phone: '91234567', variables: { name: 'A\u0000' } }] });
    expect(variable).toMatchObject({ ok: false, message: REQUEST_MESSAGES.nulCharacter('variables') });
  });
  it('refuses a clientId that is not short text', () => {
    for (const clientId of ['x'.repeat(LIMITS.clientIdMaxLength + 1), { a: 1 }, 'a\u0000']) {
      const r = checkStartJob({ ...ok, clientId });
      expect(r.ok).toBe(false);
    }
    expect(checkStartJob({ ...ok, clientId: 'x'.repeat(LIMITS.clientIdMaxLength + 1) })).toMatchObject({
      message: REQUEST_MESSAGES.clientIdInvalid,
    });
    expect(checkStartJob({ ...ok, clientId: 'abc' }).ok).toBe(true);
  });
});

describe('schemas document themselves', () => {
  it('the template body carries the limits of LIMITS', () => {
    const doc = openApiSchemaOf(TemplateCreateSchema) as { properties: Record<string, { maxLength?: number }> };
    expect(doc.properties.name!.maxLength).toBe(LIMITS.templateNameMax);
    expect(doc.properties.message_content!.maxLength).toBe(LIMITS.templateMessageMax);
    expect(doc.properties.description!.maxLength).toBe(LIMITS.templateDescriptionMax);
    expect(validateTemplateCreate({ name: 'n', message_content: 'm' }).ok).toBe(true);
  });
});

describe('idempotency key', () => {
  it('is built and parsed by the same pair of functions', () => {
    expect(parseIdempotencyKey(idempotencyKeyOf('job-1', '91234567'))).toEqual({
      jobId: 'job-1',
      recipient: '91234567',
    });
  });
});

describe('backoff', () => {
  it('doubles up to the cap', () => {
    expect([1, 2, 3, 4].map((r) => backoffMs(r, { baseMs: 1000, maxMs: 5000 }))).toEqual([1000, 2000, 4000, 5000]);
    expect(backoffMs(1, { baseMs: 1000, jitter: 0.5 }, () => 1)).toBe(1500);
  });
  it('retries until it works', async () => {
    let n = 0;
    const value = await withRetry(async () => (++n < 3 ? Promise.reject(new Error('x')) : n), {
      retries: 5,
      baseMs: 1,
      sleep: async () => undefined,
    });
    expect(value).toBe(3);
  });
  it('gives up after the retries and throws the last error', async () => {
    let n = 0;
    const waits: number[] = [];
    await expect(
      withRetry(async () => Promise.reject(new Error(`e${++n}`)), {
        retries: 2,
        baseMs: 10,
        sleep: async (ms) => void waits.push(ms),
      }),
    ).rejects.toThrow('e3');
    expect(waits).toEqual([10, 20]);
  });
  it('stops at once when shouldRetry says no', async () => {
    let n = 0;
    await expect(
      withRetry(async () => Promise.reject(new Error(String(++n))), {
        baseMs: 1,
        shouldRetry: () => false,
        sleep: async () => undefined,
      }),
    ).rejects.toThrow('1');
    expect(n).toBe(1);
  });
  it('keeps to a time budget: waits 250, 500, … (capped) and gives up when the next wait would overrun it', async () => {
    let clock = 0;
    const waits: number[] = [];
    const retried: number[] = [];
    const options = {
      baseMs: 250,
      maxMs: 1000,
      budgetMs: 3000,
      now: () => clock,
      sleep: async (ms: number) => {
        waits.push(ms);
        clock += ms;
      },
      onRetry: (_err: unknown, tryNumber: number) => void retried.push(tryNumber),
    };
    await expect(withRetry(async () => Promise.reject(new Error('down')), options)).rejects.toThrow('down');
    // 250 + 500 + 1000 + 1000 = 2750; one more 1000 would end at 3750 > 3000.
    expect(waits).toEqual([250, 500, 1000, 1000]);
    expect(retried).toEqual([1, 2, 3, 4]);
  });
  it('stops when cancelled, without another wait', async () => {
    let cancelled = false;
    let n = 0;
    const waits: number[] = [];
    const attempt = async () => {
      if (++n === 2) cancelled = true;
      throw new Error(`e${n}`);
    };
    await expect(
      withRetry(attempt, { baseMs: 5, cancelled: () => cancelled, sleep: async (ms) => void waits.push(ms) }),
    ).rejects.toThrow('e2');
    expect(waits).toEqual([5]);
  });
  it('is the jobs retry rule (2 s, 4 s, 8 s) and the redelivery rule of the event consumers (1 s … 30 s)', () => {
    expect([1, 2, 3].map((r) => backoffMs(r, { baseMs: 2000 }))).toEqual([2000, 4000, 8000]);
    // The consumers used to nak with min(30 s, 500 ms × 2^delivery).
    for (let delivery = 1; delivery <= 20; delivery++) {
      expect(backoffMs(delivery, { baseMs: 1000, maxMs: 30_000 })).toBe(Math.min(30_000, 500 * 2 ** delivery));
    }
  });
});

describe('absent keys are absent, not errors', () => {
  it('a list query without filters, a dashboard query without limit', async () => {
    const { TemplateListQuerySchema } = await import('../../templates/schemas.js');
    const { DashboardQuerySchema } = await import('../../dashboard/schemas.js');
    expect(TemplateListQuerySchema.parse({})).toEqual({});
    expect(TemplateListQuerySchema.parse({ category: 'all', is_favorite: 'true' })).toEqual({ is_favorite: true });
    expect(DashboardQuerySchema.parse({})).toEqual({ limit: LIMITS.dashboardRecentMessages });
    expect(DashboardQuerySchema.safeParse({ limit: ['1', '2'] }).success).toBe(false);
  });
});

describe('NATS payloads have schemas too', () => {
  it('sessions.send carries an explicit optional jobId; events check their shape', async () => {
    const { SessionSendRequestSchema } = await import('../../sessions/schemas.js');
    const { EVENT_SCHEMAS } = await import('../../registry/events.js');
    const send = {
      userId: 'u',
      to: '85291234567',
      text: 'Hi',
      idempotencyKey: idempotencyKeyOf('job-1', '91234567'),
      jobId: 'job-1',
    };
    expect(SessionSendRequestSchema.parse(send)).toEqual(send);
    expect(SessionSendRequestSchema.safeParse({ ...send, to: '123' }).success).toBe(false);
    const log = {
      eventId: 'e',
      userId: 'u',
      at: '2025-01-01T00:00:00.000Z',
      jobId: 'j',
      type: 'info',
      message: 'm',
      timestamp: '2025-01-01T00:00:00.000Z',
    };
    expect(EVENT_SCHEMAS['events.job.log'].safeParse(log).success).toBe(true);
    expect(EVENT_SCHEMAS['events.job.log'].safeParse({ ...log, type: 'loud' }).success).toBe(false);
  });
});

describe('no recursion on what a user sends', () => {
  it('a phone_numbers JSON string nested 20,000 deep is an invalid number, not a stack overflow', () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const r = validateTemplateCreate({ name: 'n', message_content: 'm', phone_numbers: `[${deep}, ${deep}]` });
    expect(r).toMatchObject({ ok: false, errors: { phone_numbers: 'Invalid phone numbers: […], […]' } });
  });
});
