import { describe, expect, it } from '@jest/globals';
import { SessionsErrorCode } from '../../sessions/rpc.js';
import { CommonErrorCode } from '../../common/errors.js';
import { checkRequest, invalidRequestCodeOf, REQUEST_KEYS, REQUEST_SCHEMAS } from '../requests.js';
import { isServiceRequest, type RequestKey } from '../rpc.js';
import { LIMITS } from '../../common/limits.js';

/** Every key of RequestMap, written out: the registry must hold exactly these (the type already insists on each). */
const KEYS: Record<RequestKey, true> = {
  'sessions.ping': true,
  'jobs.ping': true,
  'templates.ping': true,
  'dashboard.ping': true,
  'sessions.connect': true,
  'sessions.status': true,
  'sessions.send': true,
  'sessions.logout': true,
  'sessions.pairing.request': true,
  'sessions.pairing.cancel': true,
  'sessions.simulator.scan': true,
  'sessions.simulator.pair': true,
  'sessions.simulator.disconnect': true,
  'sessions.simulator.outbox': true,
  'sessions.simulator.inbound': true,
  'jobs.idScheme': true,
  'jobs.pacing': true,
  'jobs.start': true,
  'jobs.status': true,
  'jobs.logs': true,
  'jobs.cancel': true,
  'jobs.pause': true,
  'jobs.resume': true,
  'jobs.policy.get': true,
  'jobs.sends.today': true,
  'jobs.policy.set': true,
  'jobs.results': true,
  'jobs.list': true,
  'jobs.export': true,
  'jobs.optouts.list': true,
  'jobs.optouts.add': true,
  'jobs.optouts.remove': true,
  'jobs.optouts.export': true,
  'jobs.optouts.check': true,
  'jobs.optouts.settings.get': true,
  'jobs.optouts.settings.set': true,
  'templates.list': true,
  'templates.create': true,
  'templates.update': true,
  'templates.delete': true,
  'templates.duplicate': true,
  'templates.categories': true,
  'templates.stats': true,
  'templates.use': true,
  'dashboard.get': true,
  'dashboard.preferences.get': true,
  'dashboard.preferences.set': true,
  'integrations.ping': true,
  'integrations.keys.create': true,
  'integrations.keys.list': true,
  'integrations.keys.revoke': true,
  'integrations.keys.verify': true,
  'integrations.webhooks.create': true,
  'integrations.webhooks.list': true,
  'integrations.webhooks.update': true,
  'integrations.webhooks.delete': true,
  'integrations.webhooks.secret': true,
  'integrations.webhooks.rotate': true,
  'integrations.webhooks.test': true,
  'integrations.webhooks.deliveries': true,
  'integrations.webhooks.resend': true,
  'integrations.messages.metadata.put': true,
  'integrations.messages.metadata.get': true,
  'integrations.idempotency.begin': true,
  'integrations.idempotency.finish': true,
  'integrations.idempotency.release': true,
  'contacts.bulk': true,
  'contacts.conversations.get': true,
  'contacts.conversations.mark': true,
  'contacts.conversations.list': true,
  'contacts.create': true,
  'contacts.delete': true,
  'contacts.get': true,
  'contacts.import': true,
  'contacts.list': true,
  'contacts.ping': true,
  'contacts.segments.count': true,
  'contacts.segments.preview': true,
  'contacts.segments.create': true,
  'contacts.segments.delete': true,
  'contacts.segments.list': true,
  'contacts.segments.members': true,
  'contacts.settings.get': true,
  'contacts.settings.set': true,
  'contacts.update': true,
  'integrations.account.delete': true,
  'integrations.account.deletion': true,
  'integrations.account.retention.get': true,
  'integrations.account.retention.set': true,
  'integrations.audit.list': true,
  'integrations.account.retention.page': true,
  'jobs.media.get': true,
  'jobs.media.hold': true,
  'jobs.media.register': true,
};

/** Keys whose request is the acting user plus fields the schema does not require (not the pings, which need nothing). */
const USER_ONLY: RequestKey[] = REQUEST_KEYS.filter(
  (k) => !isServiceRequest(k) && checkRequest(k, { userId: 'user_1' }).ok,
);

describe('REQUEST_SCHEMAS', () => {
  it('has a schema for every request key, and no other', () => {
    expect(new Set(REQUEST_KEYS)).toEqual(new Set(Object.keys(KEYS)));
    for (const key of REQUEST_KEYS) expect(typeof REQUEST_SCHEMAS[key].safeParse).toBe('function');
  });

  it('accepts the requests the callers send', () => {
    const userId = 'user_2abcDEF';
    const jobId = '3f1c9a52-8a4e-4d0e-9c1b-4f1b2a7d9e10';
    const good: Partial<Record<RequestKey, unknown>> = {
      'jobs.ping': {},
      'sessions.connect': { userId, explicit: true },
      'sessions.send': { userId, to: '85291234567', text: 'hi', idempotencyKey: `${jobId}:85291234567`, jobId },
      'jobs.start': { userId, message: 'Hi', phoneNumbers: ['91234567'], clientId: 'abc', idempotencyKey: 'gw-1' },
      'jobs.status': { userId, jobId },
      'jobs.logs': { userId, jobId, since: '2026-01-01T00:00:00Z' },
      'jobs.export': { userId, jobId, format: 'csv', inbox: '_INBOX.abc' },
      'templates.update': { userId, templateId: jobId, body: { is_favorite: true } },
      'templates.list': { userId, category: 'all', is_favorite: 'true' },
      'dashboard.get': { userId, limit: 10 },
      'dashboard.preferences.set': { userId, preferences: { auto_login_message_enabled: false } },
      'jobs.optouts.remove': { userId, phone: '91234567' },
    };
    for (const [key, request] of Object.entries(good)) {
      const check = checkRequest(key as RequestKey, request);
      expect([key, check.ok]).toEqual([key, true]);
      if (check.ok) expect(check.value).toEqual(request);
    }
    expect(USER_ONLY).toEqual(
      expect.arrayContaining(['jobs.pacing', 'templates.stats', 'sessions.status', 'dashboard.preferences.get']),
    );
  });

  it('refuses a request without userId, naming the field', () => {
    expect(USER_ONLY.length).toBeGreaterThan(10);
    for (const key of REQUEST_KEYS.filter((k) => !isServiceRequest(k))) {
      expect([key, checkRequest(key, {}).ok]).toEqual([key, false]);
      expect([key, checkRequest(key, { userId: 7 }).ok]).toEqual([key, false]);
    }
    for (const key of USER_ONLY) {
      const check = checkRequest(key, {});
      expect(check).toEqual({
        ok: false,
        code: invalidRequestCodeOf(key),
        message: 'userId is required',
        errors: { userId: 'userId is required' },
      });
    }
  });

  it('refuses a number where text belongs, without echoing the value', () => {
    const check = checkRequest('templates.use', { userId: 85291234567, templateId: 'x' });
    expect(check).toMatchObject({ ok: false, code: CommonErrorCode.InvalidRequest, message: 'userId must be text' });
    expect(JSON.stringify(check)).not.toContain('85291234567');
  });

  it('refuses a 10 kB userId and an empty id', () => {
    const huge = 'u'.repeat(10_000);
    expect(checkRequest('jobs.status', { userId: huge, jobId: 'j' })).toMatchObject({
      ok: false,
      message: `userId must be at most ${LIMITS.userIdMaxLength} characters`,
    });
    expect(JSON.stringify(checkRequest('jobs.status', { userId: huge, jobId: 'j' }))).not.toContain(huge);
    expect(checkRequest('jobs.cancel', { userId: 'u', jobId: '' })).toMatchObject({
      ok: false,
      errors: { jobId: 'jobId must not be empty' },
    });
  });

  it('refuses a request that is not an object (an array, null, text)', () => {
    for (const hostile of [[{ userId: 'u' }], null, 'userId', 42, undefined]) {
      expect(checkRequest('templates.create', hostile)).toMatchObject({
        ok: false,
        message: 'The request must be an object',
      });
    }
  });

  it('gives every field its own message, with the sessions service its own code', () => {
    const check = checkRequest('sessions.send', { userId: 'u', to: 'abc', text: '', idempotencyKey: '' });
    expect(check).toEqual({
      ok: false,
      code: SessionsErrorCode.InvalidRequest,
      message: 'to is not valid',
      errors: {
        to: 'to is not valid',
        text: 'text must not be empty',
        idempotencyKey: 'idempotencyKey must not be empty',
      },
    });
  });

  it('checks optional fields when present', () => {
    expect(checkRequest('jobs.logs', { userId: 'u', jobId: 'j', since: 5 })).toMatchObject({
      ok: false,
      errors: { since: 'since must be text' },
    });
    expect(checkRequest('jobs.start', { userId: 'u', message: 'm', staged: { bucket: 'b' } })).toMatchObject({
      ok: false,
      errors: { 'staged.name': 'staged.name is required' },
    });
    expect(checkRequest('sessions.connect', { userId: 'u', explicit: 'yes' })).toMatchObject({
      ok: false,
      errors: { explicit: 'explicit must be true or false' },
    });
  });

  it('leaves the absence of a body the service judges to the service (its own words)', () => {
    // A staged start: the body is in the object store, `message` (undefined) does not survive JSON.
    expect(
      checkRequest('jobs.start', {
        userId: 'u',
        clientId: 'c',
        idempotencyKey: 'k',
        staged: { bucket: 'job-starts', name: 'n' },
      }).ok,
    ).toBe(true);
    for (const key of [
      'templates.create',
      'jobs.policy.set',
      'jobs.optouts.add',
      'jobs.optouts.settings.set',
      'dashboard.preferences.set',
    ] as const) {
      expect([key, checkRequest(key, { userId: 'u' }).ok]).toEqual([key, true]);
    }
  });

  it('drops fields a request does not declare', () => {
    expect(checkRequest('jobs.status', { userId: 'u', jobId: 'j', extra: { deep: true } })).toEqual({
      ok: true,
      value: { userId: 'u', jobId: 'j' },
    });
  });
});
