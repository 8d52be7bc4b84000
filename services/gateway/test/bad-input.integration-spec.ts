import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io } from 'socket.io-client';
import {
  JOB_MESSAGES,
  JobsErrorCode,
  LIMITS,
  MESSAGES,
  REQUEST_MESSAGES,
  SOCKET,
  SOCKET_CLIENT_EVENTS,
  SOCKET_EVENTS,
  TEMPLATE_MESSAGES,
} from '@bns/contracts';
import {
  api,
  devSignIn,
  simulatorOutbox,
  simulatorScan,
  startSystem,
  waitFor,
  type DevSession,
  type System,
} from '@bns/testing';

/** `[[[…]]]` nested `depth` levels, built without recursion. */
function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Bad input and abuse: every malformed body is a 4xx with a plain message, never a 5xx. */
describe('gateway: bad input never costs a 5xx', () => {
  let sys: System;
  let url: string;
  let ann: DevSession;
  const client = () => api(url, ann.token);
  const raw = (method: string, path: string, body: string) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ann.token}` },
      body,
    }).then(async (res) => ({
      status: res.status,
      body: JSON.parse(await res.text()) as { success: boolean; error: string; code: string },
    }));
  const start = (body: Record<string, unknown>) =>
    client().post('/start-bulk-messages', { message: 'Hi', phoneNumbers: ['91234567'], ...body });

  beforeAll(async () => {
    sys = await startSystem({ services: ['templates', 'jobs', 'sessions'], shards: 1 });
    url = sys.gateway.url;
    ann = await devSignIn(url, 'ann-bad-input@shop.hk');
    // A linked account, so a bad start body would reach the jobs service if the gateway let it through.
    const socket = io(url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token: ann.token },
      reconnection: false,
      forceNew: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    const ready = new Promise<void>((resolve) => socket.once(SOCKET_EVENTS.ready, () => resolve()));
    socket.emit(SOCKET_CLIENT_EVENTS.createSession, {
      id: socket.id,
      clerkUserId: ann.userId,
      isExplicitRequest: true,
    });
    await simulatorScan(url, ann.token);
    await ready;
    socket.close();
  });
  afterAll(() => sys?.stop());

  it('refuses a body nested 5,000 deep at parse time with a 400 and the contracts message', async () => {
    const deep = nested(5000);
    for (const [method, path, body] of [
      ['POST', '/start-bulk-messages', `{"message":"Hi","phoneNumbers":["91234567"],"recipients":${deep}}`],
      ['POST', `/api/templates/${ann.userId}`, `{"name":"n","message_content":"m","phone_numbers":${deep}}`],
      ['PUT', `/api/templates/${ann.userId}/00000000-0000-4000-8000-000000000000`, `{"description":${deep}}`],
      ['POST', '/api/user/preferences', `{"preferences":${deep}}`],
    ] as const) {
      const res = await raw(method, path, body);
      expect({ path, status: res.status, error: res.body.error }).toEqual({
        path,
        status: 400,
        error: REQUEST_MESSAGES.tooDeep,
      });
    }
    // Nesting hidden inside a string (phone_numbers may be a JSON string) is refused by the form rule, not a crash.
    const inString = await client().post(`/api/templates/${ann.userId}`, {
      name: 'n',
      message_content: 'm',
      phone_numbers: `[${deep}]`,
    });
    expect(inString.status).toBe(400);
    expect(inString.body.errors).toEqual({
      phone_numbers: `${MESSAGES.phoneNumberInvalid}. Invalid phone numbers: […]`,
    });
    // The limit itself is allowed through the parser (and then refused by the schema, not by a crash).
    const atLimit = await raw(
      'POST',
      '/start-bulk-messages',
      `{"message":"Hi","phoneNumbers":${nested(LIMITS.jsonMaxDepth - 1)}}`,
    );
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.error).not.toBe(REQUEST_MESSAGES.tooDeep);
  });

  it('refuses a NUL in the message, a variable or the clientId with a 400 that says so', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ message: 'Hi\u0000there' }, REQUEST_MESSAGES.nulCharacter('message')],
      [
        {
          message: 'Hi {{name}}',
          phoneNumbers: undefined,
          recipients: [{ phone: '91234567', variables: { name: 'A\u0000nn' } }],
        },
        REQUEST_MESSAGES.nulCharacter('variables'),
      ],
      [{ clientId: 'tab\u00001' }, REQUEST_MESSAGES.nulCharacter('clientId')],
    ];
    for (const [body, error] of cases) {
      const res = await start(body);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error });
    }
  });

  it('refuses a 100,000-character or an object clientId with 400', async () => {
    for (const clientId of ['c'.repeat(100_000), { id: 'x' }, 42]) {
      const res = await start({ clientId });
      expect({ status: res.status, error: res.body.error }).toEqual({
        status: 400,
        error: REQUEST_MESSAGES.clientIdInvalid,
      });
    }
    expect((await start({ clientId: 'a-socket-id' })).status).toBe(200);
  });

  it('refuses a start it could not send as meant, in plain words: invisible or broken text, both lists, oversized variables', async () => {
    const rows = (n: number, variables: (i: number) => Record<string, string>) =>
      Array.from({ length: n }, (_, i) => ({ phone: String(61_000_000 + i), variables: variables(i) }));
    const allRows = Array.from({ length: 60 }, (_, i) => i + 1);
    const personal = (recipients: unknown[], message = 'Hi {{name}}') => ({
      message,
      phoneNumbers: undefined,
      recipients,
    });
    const cases: [string, Record<string, unknown>, string, JobsErrorCode][] = [
      ['zero-width spaces', { message: '\u200b\u200b' }, JOB_MESSAGES.enterMessageFirst, JobsErrorCode.MessageRequired],
      [
        'joiners, word joiner, BOM',
        { message: '\u200d\u2060\ufeff' },
        JOB_MESSAGES.enterMessageFirst,
        JobsErrorCode.MessageRequired,
      ],
      [
        'a lone surrogate in the message',
        { message: 'a\ud800b' },
        REQUEST_MESSAGES.invalidText('message'),
        JobsErrorCode.InvalidField,
      ],
      [
        'a lone surrogate in a variable',
        personal(rows(1, () => ({ name: 'A\udc00' }))),
        REQUEST_MESSAGES.invalidText('variables'),
        JobsErrorCode.InvalidField,
      ],
      [
        'both lists',
        { recipients: [{ phone: '61234567' }] },
        JOB_MESSAGES.phoneNumbersAndRecipients,
        JobsErrorCode.PhoneNumbersAndRecipients,
      ],
      // 60 rows of 20,000 characters (1.2 MB, staged): once stored, the report's first page could not cross NATS.
      [
        '20,000-character values',
        personal(rows(60, (i) => ({ name: `N${i}`, notes: 'x'.repeat(20_000) }))),
        JOB_MESSAGES.variableTooLong('notes', allRows),
        JobsErrorCode.VariableTooLong,
      ],
      [
        '51 variables',
        personal(rows(51, (i) => ({ name: 'Ann', [`c${i}`]: 'v' }))),
        JOB_MESSAGES.tooManyVariables(52),
        JobsErrorCode.TooManyVariables,
      ],
      [
        'a 65-character name',
        personal(rows(2, (i) => ({ name: 'Ann', ...(i === 1 ? { ['n'.repeat(65)]: 'v' } : {}) }))),
        JOB_MESSAGES.variableNameTooLong([2]),
        JobsErrorCode.VariableNameTooLong,
      ],
    ];
    for (const [name, body, error, code] of cases) {
      const res = await start(body);
      expect({ name, status: res.status, error: res.body.error, code: res.body.code }).toEqual({
        name,
        status: 400,
        error,
        code,
      });
    }
  }, 60_000);

  it('sends a variable named __proto__ like any other, and reports it', async () => {
    const res = await raw(
      'POST',
      '/start-bulk-messages',
      '{"message":"Hi {{__proto__}}, {{constructor}}","recipients":[{"phone":"62345678","variables":{"__proto__":"x","constructor":"c"}}]}',
    );
    expect(res.status).toBe(200);
    const jobId = (res.body as unknown as { jobId: string }).jobId;
    const report = await client().get(`/job-results/${jobId}`);
    expect(report.status).toBe(200);
    expect(report.body.results[0].variables).toEqual({ ['__proto__']: 'x', constructor: 'c' });
    const sent = await waitFor(
      async () => (await simulatorOutbox(url, ann.token)).find((m) => m.to.endsWith('62345678')),
      30_000,
      200,
      'the message',
    );
    expect(sent.text).toBe('Hi x, c');
  }, 45_000);

  it('answers 413 for a template body that cannot cross NATS (1.1 MB), not 503', async () => {
    const res = await client().post(`/api/templates/${ann.userId}`, {
      name: 'Big',
      message_content: 'x'.repeat(1_100_000),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, error: MESSAGES.payloadTooLarge });
    const update = await client().put(`/api/templates/${ann.userId}/00000000-0000-4000-8000-000000000000`, {
      description: 'd'.repeat(1_100_000),
    });
    expect(update.status).toBe(413);
  });

  it('says "The request body is not valid JSON" for malformed JSON, without parser internals', async () => {
    for (const body of ['{"message": ', 'true false', '{"a":1,}', "{'a':1}"]) {
      const res = await raw('POST', '/start-bulk-messages', body);
      expect({ status: res.status, error: res.body.error }).toEqual({
        status: 400,
        error: REQUEST_MESSAGES.invalidJson,
      });
    }
  });

  it('says a body must be JSON when it is sent as text, a form or with no type, and that it must be UTF-8 when its bytes are not', async () => {
    const send = async (path: string, body: Buffer | string, headers: Record<string, string>) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ann.token}`, ...headers },
        body,
      });
      return { status: res.status, error: ((await res.json()) as { error: string }).error };
    };
    const valid = JSON.stringify({ clerkUserId: ann.userId, message: 'Hi', phoneNumbers: ['91234567'] });
    const jobsBefore = (await client().get(`/api/jobs/${ann.userId}`)).body.jobs.length;
    for (const headers of [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/xml' },
      { 'content-type': '' },
    ]) {
      // Not "Please enter a message first": a message was sent, in the wrong wrapping.
      expect(await send('/start-bulk-messages', valid, headers)).toEqual({
        status: 400,
        error: REQUEST_MESSAGES.bodyNotJson,
      });
      expect(await send(`/api/templates/${ann.userId}`, valid, headers)).toEqual({
        status: 400,
        error: REQUEST_MESSAGES.bodyNotJson,
      });
    }
    // Bytes that are not UTF-8 would reach the customer as U+FFFD: refused, not changed.
    const latin1 = Buffer.concat([
      Buffer.from('{"message":"caf'),
      Buffer.from([0xe9]),
      Buffer.from(`","phoneNumbers":["91234567"],"clerkUserId":"${ann.userId}"}`),
    ]);
    expect(await send('/start-bulk-messages', latin1, { 'content-type': 'application/json' })).toEqual({
      status: 400,
      error: REQUEST_MESSAGES.bodyNotUtf8,
    });
    expect(await send('/start-bulk-messages', valid, { 'content-type': 'application/json; charset=latin1' })).toEqual({
      status: 400,
      error: REQUEST_MESSAGES.charsetUnsupported,
    });
    expect(
      await send('/start-bulk-messages', valid, { 'content-type': 'application/json', 'content-encoding': 'zstd-ish' }),
    ).toEqual({ status: 400, error: REQUEST_MESSAGES.encodingUnsupported });
    // Nothing was started by any of them.
    expect((await client().get(`/api/jobs/${ann.userId}`)).body.jobs).toHaveLength(jobsBefore);
  });

  it('says "The request body must be a JSON object" for a body that is valid JSON but no object', async () => {
    for (const body of ['null', '123', '"text"', 'true', ' false ']) {
      const res = await raw('POST', '/start-bulk-messages', body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({
        body,
        status: 400,
        error: REQUEST_MESSAGES.bodyNotObject,
      });
    }
  });

  it('checks template fields at the gateway with the spec words, and types every field', async () => {
    const res = await client().post(`/api/templates/${ann.userId}`, { name: { $gt: '' }, message_content: 'm' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      success: false,
      error: MESSAGES.fixFormErrors,
      errors: { name: TEMPLATE_MESSAGES.nameNotText },
    });
    const list = await client().get(`/api/templates/${ann.userId}?category=nope`);
    expect(list.status).toBe(400);
    expect(list.body.error).toBe(MESSAGES.categoryInvalid);
  });

  it('is still healthy afterwards', async () => {
    expect((await client().get(`/api/templates/${ann.userId}/stats`)).status).toBe(200);
    expect((await client().post('/start-bulk-messages', { message: 'Hi', phoneNumbers: ['91234567'] })).status).toBe(
      200,
    );
  });
});
