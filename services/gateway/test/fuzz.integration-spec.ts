import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { io } from 'socket.io-client';
import { SOCKET, SOCKET_CLIENT_EVENTS, SOCKET_EVENTS } from '@bns/contracts';
import { devSignIn, REPO_ROOT, simulatorScan, startSystem, type DevSession, type System } from '@bns/testing';

/**
 * Every HTTP endpoint of the gateway (as /api/docs-json lists them) gets malformed bodies, params and
 * queries, with a valid token and without one. Whatever arrives, the answer is never a 5xx, always JSON
 * with a plain message (no parser internals), and every service is still ready afterwards.
 * Deterministic: the random part comes from a seeded generator (FUZZ_SEED to try another seed).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 15_2026);
const DEPTH = 5000;
const CONCURRENCY = 6;
/** The gateway's BODY_LIMIT default (5mb). */
const BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** What an answer must never show a user: parser, runtime or database internals. */
const INTERNALS =
  /invalid input|expected \w+, received \w+|invalid_type|ZodError|unexpected (token|end|non-whitespace)|"[^"]*" is not valid JSON|JSON\.parse|SyntaxError|incorrect header check|RangeError|TypeError|Maximum call stack|stack|\bat [\w.<>]+ \(|node_modules|invalid byte sequence|violates|QueryFailedError|ECONNREFUSED/i;

/** Routes the gateway's controllers declare: the docs must list at least these. */
const KNOWN_ROUTES = [
  'POST /start-bulk-messages',
  'GET /api/jobs/pacing',
  'GET /job-status/{jobId}',
  'GET /job-logs/{jobId}',
  'POST /cancel-job/{jobId}',
  'GET /auth/dev/.well-known/jwks.json',
  'POST /auth/dev/sign-in',
  'POST /auth/dev/sign-out',
  'GET /api/config',
  'GET /api/templates/{userId}/categories',
  'GET /api/templates/{userId}/stats',
  'GET /api/templates/{userId}',
  'POST /api/templates/{userId}',
  'PUT /api/templates/{userId}/{templateId}',
  'DELETE /api/templates/{userId}/{templateId}',
  'POST /api/templates/{userId}/{templateId}/use',
  'POST /api/templates/{userId}/{templateId}/duplicate',
  'POST /dev/simulator/scan',
  'POST /dev/simulator/disconnect',
  'GET /dev/simulator/outbox',
  'POST /api/session/cleanup',
  'GET /api/dashboard/{userId}',
  'POST /api/user/preferences',
];

/** Fields the docs do not name but the gateway reads (a body `clerkUserId` is checked against the token). */
const EXTRA_FIELDS: Record<string, Record<string, unknown>> = {
  'POST /start-bulk-messages': {
    clerkUserId: '<me>',
    message: 'Hi {{name}}',
    recipients: [{ phone: '91234567', variables: { name: 'Ann' } }],
    clientId: 'socket-1',
  },
  'POST /api/session/cleanup': { clerkUserId: '<me>' },
  'POST /api/user/preferences': { clerkUserId: '<me>', preferences: { auto_login_message_enabled: true } },
};

/** Fields inside fields: each odd value also goes one level down, where validators look last. */
const INNER_FIELDS: Record<string, ((raw: string) => [string, string])[]> = {
  'POST /start-bulk-messages': [
    (raw) => ['phoneNumbers', raw],
    (raw) => ['phoneNumbers', `["91234567",${raw}]`],
    (raw) => ['recipients', `[{"phone":${raw},"variables":{"name":"Ann"}}]`],
    (raw) => ['recipients', `[{"phone":"91234567","variables":{"name":${raw}}}]`],
    (raw) => ['recipients', `[{"phone":"91234567","variables":${raw}}]`],
    (raw) => ['recipients', `[{"phone":"91234567","variables":{"name":"Ann"},"row":${raw}}]`],
  ],
  'POST /api/user/preferences': [(raw) => ['preferences', `{"auto_login_message_enabled":${raw}}`]],
};

/** Calls that unlink or sign out: they act as a second user, so the first stays linked and its sends reach the database. */
const UNLINKING = ['POST /dev/simulator/disconnect', 'POST /api/session/cleanup'];

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
  };
}
type Rng = ReturnType<typeof seeded>;

interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** With {param} placeholders, as the docs write it. */
  path: string;
  /** A plausible body: field → JSON value, from the docs' schema and examples. */
  base: Record<string, unknown>;
  queries: string[];
}

interface Case {
  family: string;
  name: string;
  method: Endpoint['method'];
  /** Already encoded as it goes on the wire. */
  path: string;
  body?: string | Buffer;
  headers: Record<string, string>;
}

interface Problem {
  request: string;
  answer: string;
}

// ---- raw JSON building: bodies are text, so they can hold what JSON.stringify would never write ----

const json = (v: unknown) => JSON.stringify(v);
const objectOf = (entries: [string, string][]) => `{${entries.map(([k, raw]) => `${json(k)}:${raw}`).join(',')}}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const WRONG_TYPES = ['123', '-1.5', 'true', 'false', 'null', '[]', '{}', '"x"', '""', '[null]', '{"a":"b"}'];
const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '9007199254740993',
  '-0',
  '0.1e1',
  '-123456789012345678901234567890.5',
];
const NUL_STRINGS = [json('a\u0000b'), json('\u0000'), json('91234567\u0000'), json('{{name\u0000}}')];
const UNICODE_STRINGS = [
  '"\\ud800"', // lone high surrogate
  '"x\\udc00y"', // lone low surrogate
  '"\\udbff\\udbff"',
  json('\u202eevil\u202c'), // right-to-left override
  json('مرحبا {{name}} שלום'),
  json('😀👍🏽👨‍👩‍👧‍👦🏳️‍🌈'),
  json('\ufeffBOM'),
  json('e\u0301'.repeat(2000)), // combining marks
  json('\uffff\ufffe\u2028\u2029'),
  json('ｆｕｌｌ\u200b\u200dwidth'),
];
const PROTO_VALUES = [
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"__proto__":null}',
  '"__proto__"',
  '"constructor"',
  '[{"__proto__":{"x":1}}]',
];

function oddValues(family: string): string[] {
  switch (family) {
    case 'wrong types':
      return WRONG_TYPES;
    case 'huge numbers':
      return HUGE_NUMBERS;
    case 'NUL characters':
      return NUL_STRINGS;
    case 'odd unicode':
      return UNICODE_STRINGS;
    case 'prototype keys':
      return PROTO_VALUES;
    case 'deep nesting':
      return [deepArray(DEPTH), deepObject(DEPTH), `[${deepObject(DEPTH)}]`];
    case 'arrays where objects are expected':
      return ['[]', '[[]]', '[1,2,3]', '[{"phone":"91234567"}]', '[["91234567"]]'];
    default:
      return [];
  }
}

/** A random JSON text: odd strings, numbers, nesting and keys, from the seeded generator. */
function randomJson(rng: Rng, depth = 0): string {
  const kind = rng.int(depth > 6 ? 4 : 7);
  switch (kind) {
    case 0:
      return rng.pick([...WRONG_TYPES, ...HUGE_NUMBERS]);
    case 1:
      return rng.pick([...NUL_STRINGS, ...UNICODE_STRINGS]);
    case 2:
      return json(String.fromCharCode(...Array.from({ length: rng.int(40) }, () => rng.int(0xffff))));
    case 3:
      return json('x'.repeat(rng.pick([0, 1, 255, 256, 1001, 4097, 65_537])));
    case 4:
      return `[${Array.from({ length: rng.int(5) }, () => randomJson(rng, depth + 1)).join(',')}]`;
    default:
      return objectOf(
        Array.from({ length: 1 + rng.int(5) }, () => [
          rng.pick([
            'message',
            'phoneNumbers',
            'recipients',
            'variables',
            'phone',
            'name',
            'message_content',
            'preferences',
            'clerkUserId',
            '__proto__',
            'constructor',
            'prototype',
            '',
            '\u0000',
            'toString',
          ]),
          randomJson(rng, depth + 1),
        ]),
      );
  }
}

// ---- endpoints from the docs ----

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content?: Record<string, { schema?: Schema }> }; parameters?: { name: string; in: string }[] }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
}
interface Schema {
  $ref?: string;
  properties?: Record<string, Schema & { example?: unknown; type?: string; default?: unknown; enum?: unknown[] }>;
  example?: unknown;
  type?: string;
  allOf?: Schema[];
}

function bodyOf(doc: OpenApi, schema: Schema | undefined): Record<string, unknown> {
  if (!schema) return {};
  const resolved = schema.$ref ? doc.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
  if (!resolved) return {};
  const out: Record<string, unknown> = {};
  for (const part of resolved.allOf ?? []) Object.assign(out, bodyOf(doc, part));
  if (resolved.example && typeof resolved.example === 'object' && !Array.isArray(resolved.example))
    Object.assign(out, resolved.example);
  for (const [name, p] of Object.entries(resolved.properties ?? {})) {
    if (name in out) continue;
    const nested = p.$ref ? bodyOf(doc, p) : undefined;
    out[name] =
      p.example ??
      p.default ??
      p.enum?.[0] ??
      nested ??
      ({ boolean: true, number: 1, integer: 1, array: [], object: {} } as Record<string, unknown>)[p.type ?? ''] ??
      'x';
  }
  return out;
}

const NOT_FUZZED = new Set(['POST /auth/dev/sign-out']);

function endpointsOf(doc: OpenApi): Endpoint[] {
  const out: Endpoint[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const m = method.toUpperCase() as Endpoint['method'];
      if (!['GET', 'POST', 'PUT', 'DELETE'].includes(m)) continue;
      const key = `${m} ${path}`;
      // It would end the fuzzer's own sign-in (every later case a 401); auth.integration-spec covers it.
      if (NOT_FUZZED.has(key)) continue;
      const base = { ...bodyOf(doc, op.requestBody?.content?.['application/json']?.schema), ...EXTRA_FIELDS[key] };
      out.push({
        method: m,
        path,
        base,
        queries: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      });
    }
  }
  return out.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

describe('gateway fuzz: malformed bodies, params and queries on every endpoint', () => {
  let sys: System;
  let me: DevSession;
  let other: DevSession;
  let doc: OpenApi;
  let endpoints: Endpoint[];
  let templateId: string;
  const problems: Problem[] = [];
  let sent = 0;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      // The fuzzer's own volume must not be what answers (429 would hide the handlers).
      // Jobs the fuzzer starts by accident send slowly in the background instead of competing for the CPU.
      serviceEnv: {
        gateway: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
        jobs: { SEND_DELAY_MS: '60000' },
      },
    });
    me = await devSignIn(sys.gateway.url, 'fuzz@example.com');
    other = await devSignIn(sys.gateway.url, 'fuzz-other@example.com');
    // Linked, so a start-bulk body that passes validation goes on to the database (where NUL used to fail).
    const socket = io(sys.gateway.url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token: me.token },
      reconnection: false,
      forceNew: true,
    });
    const ready = new Promise((resolve) => socket.once(SOCKET_EVENTS.ready, resolve));
    await new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(undefined));
      socket.once('connect_error', reject);
    });
    socket.emit(SOCKET_CLIENT_EVENTS.createSession, { id: me.userId, clerkUserId: me.userId, isExplicitRequest: true });
    await simulatorScan(sys.gateway.url, me.token);
    await ready;
    socket.close();
    doc = (await (await fetch(`${sys.gateway.url}/api/docs-json`)).json()) as OpenApi;
    endpoints = endpointsOf(doc);
    const created = await fetch(`${sys.gateway.url}/api/templates/${me.userId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${me.token}` },
      body: json({ name: 'Fuzz', message_content: 'Hello' }),
    });
    templateId = ((await created.json()) as { template: { id: string } }).template.id;
  }, 180_000);

  afterAll(async () => {
    const byFamily = new Map<string, number>();
    for (const p of problems)
      byFamily.set(p.request.split(' | ')[0]!, (byFamily.get(p.request.split(' | ')[0]!) ?? 0) + 1);
    const fivexx = problems.filter((p) => /^5\d\d /.test(p.answer) || p.answer.startsWith('no answer')).length;
    process.stdout.write(
      `gateway fuzz (seed ${SEED}): ${sent} requests, ${fivexx} 5xx, ${problems.length} problems${[...byFamily].map(([f, n]) => `\n  ${f}: ${n}`).join('')}\n`,
    );
    // Every problem, for whoever fixes them (the assertions show only the first few).
    mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
    writeFileSync(
      join(REPO_ROOT, 'test-output', 'gateway-fuzz-problems.json'),
      JSON.stringify({ seed: SEED, requests: sent, problems }, null, 2),
    );
    await sys?.stop();
  });

  const actorOf = (e: Endpoint) => (UNLINKING.includes(`${e.method} ${e.path}`) ? other : me);

  /** Concrete paths: every {param} gets the caller's id / a real template id, or `value` where asked. */
  const pathOf = (e: Endpoint, override?: { param: string; value: string }) =>
    e.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (override && (override.param === name || override.param === '*')) return override.value;
      if (name === 'userId') return actorOf(e).userId;
      // DELETE gets an id that is not there, so the other calls keep a real template to work on.
      if (name === 'templateId') return e.method === 'DELETE' ? '00000000-0000-4000-8000-000000000001' : templateId;
      return '00000000-0000-4000-8000-000000000000';
    });

  const hasBody = (e: Endpoint) => e.method !== 'GET';

  /** The base body with `clerkUserId` filled in, as raw JSON field texts. */
  const baseEntries = (e: Endpoint): [string, string][] =>
    Object.entries(e.base).map(([k, v]) => [k, json(v === '<me>' ? actorOf(e).userId : v)]);

  /** One field of the base body replaced by each raw value (a body with no fields gets a made-up one). */
  function fieldCases(family: string, values: string[]): Case[] {
    const cases: Case[] = [];
    for (const e of endpoints.filter(hasBody)) {
      const entries = baseEntries(e);
      const fields = entries.length > 0 ? entries.map(([k]) => k) : ['x'];
      const setters = [
        ...fields.map((field) => (raw: string): [string, string] => [field, raw]),
        ...(INNER_FIELDS[`${e.method} ${e.path}`] ?? []),
      ];
      for (const set of setters) {
        for (const [i, raw] of values.entries()) {
          const [field, text] = set(raw);
          const body = objectOf([...entries.filter(([k]) => k !== field), [field, text]]);
          cases.push({
            family,
            name: `${field} = ${text.slice(0, 40)} (${family} #${i + 1})`,
            method: e.method,
            path: pathOf(e),
            body,
            headers: { 'content-type': 'application/json' },
          });
        }
      }
    }
    return cases;
  }

  /** Whole bodies, sent to every endpoint that takes one. */
  function bodyCases(
    family: string,
    bodies: { name: string; body: string | Buffer; headers?: Record<string, string> }[],
  ): Case[] {
    return endpoints.filter(hasBody).flatMap((e) =>
      bodies.map((b) => ({
        family,
        name: b.name,
        method: e.method,
        path: pathOf(e),
        body: b.body,
        headers: { 'content-type': 'application/json', ...b.headers },
      })),
    );
  }

  /** Every endpoint with each odd path-parameter value, and each GET with each odd query. */
  function paramCases(family: string, values: string[], queries: string[]): Case[] {
    const cases: Case[] = [];
    for (const e of endpoints) {
      if (e.path.includes('{')) {
        for (const value of values)
          cases.push({
            family,
            name: `params = ${value.slice(0, 40)}`,
            method: e.method,
            path: pathOf(e, { param: '*', value }),
            headers: {},
          });
      }
      for (const q of queries)
        cases.push({ family, name: `?${q.slice(0, 60)}`, method: e.method, path: `${pathOf(e)}?${q}`, headers: {} });
      // Each query the docs list, named twice: it reaches the schema as a list.
      for (const q of e.queries) {
        for (const twice of [`${q}=1&${q}=2`, `${q}=csv&${q}=csv`])
          cases.push({ family, name: `?${twice}`, method: e.method, path: `${pathOf(e)}?${twice}`, headers: {} });
      }
    }
    return cases;
  }

  async function send(c: Case, token: string | undefined): Promise<void> {
    const request = `${c.family} | ${c.method} ${c.path.slice(0, 120)} | ${c.name} | ${token ? 'token' : 'no token'}`;
    sent++;
    let status: number;
    let contentType: string;
    let text: string;
    try {
      const res = await fetch(`${sys.gateway.url}${c.path}`, {
        method: c.method,
        headers: { ...c.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: c.body,
        signal: AbortSignal.timeout(30_000),
      });
      status = res.status;
      contentType = res.headers.get('content-type') ?? '';
      text = await res.text();
    } catch (err) {
      problems.push({ request, answer: `no answer: ${(err as Error).message}` });
      return;
    }
    // Exports answer files by design (CSV, XLSX, the take-out's zip); everything else answers JSON.
    const exported =
      status < 300 &&
      / \/[^ ]*\/export[?/ ]/.test(`${request} `) &&
      /text\/csv|spreadsheetml|application\/zip/.test(contentType);
    // The take-out refuses a second one at once in plain text, as documented (the batches send in parallel).
    const takeoutBusy =
      status === 409 && / \/api\/account\/export[? ]/.test(`${request} `) && /^text\/plain/.test(contentType);
    const problem = exported || takeoutBusy ? undefined : judge(status, contentType, text);
    if (problem) problems.push({ request, answer: `${status} ${problem}: ${text.slice(0, 200)}` });
  }

  function judge(status: number, contentType: string, text: string): string | undefined {
    if (status >= 500) return '5xx';
    if (!contentType.includes('application/json')) return `not JSON (${contentType || 'no content-type'})`;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return 'unparseable JSON';
    }
    if (status < 400) return undefined;
    const message =
      (body as { error?: unknown; message?: unknown } | null)?.error ?? (body as { message?: unknown } | null)?.message;
    if (typeof message !== 'string' || message === '') return 'no plain message';
    if (INTERNALS.test(message)) return 'internals in the message';
    return undefined;
  }

  /** Each case with the valid token and without one; answers the problems this batch found. */
  async function run(cases: Case[]): Promise<Problem[]> {
    const before = problems.length;
    const tokenFor = (c: Case) => (UNLINKING.some((r) => r === `${c.method} ${c.path}`) ? other.token : me.token);
    const queue = cases.flatMap((c) => [
      [c, tokenFor(c)],
      [c, undefined],
    ]) as [Case, string | undefined][];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) await send(...next);
      }),
    );
    return problems.slice(before);
  }

  /** Strict, but readable: how many, and the first few of them. */
  const expectNone = (found: Problem[]) =>
    expect({ problems: found.length, first: found.slice(0, 12).map((p) => `${p.request} → ${p.answer}`) }).toEqual({
      problems: 0,
      first: [],
    });

  it('the docs list every route of the gateway controllers', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    for (const route of KNOWN_ROUTES) expect(listed).toContain(route);
  });

  for (const family of [
    'wrong types',
    'huge numbers',
    'NUL characters',
    'odd unicode',
    'prototype keys',
    'deep nesting',
    'arrays where objects are expected',
  ]) {
    it(`${family} in every field of every body`, async () => {
      const extra: Case[] =
        family === 'prototype keys'
          ? bodyCases(family, [
              { name: 'top-level __proto__', body: `{"__proto__":{"polluted":true},"clerkUserId":${json(me.userId)}}` },
              {
                name: 'top-level constructor.prototype',
                body: `{"constructor":{"prototype":{"polluted":true}},"clerkUserId":${json(me.userId)}}`,
              },
              { name: 'prototype-named fields only', body: '{"toString":1,"hasOwnProperty":1,"valueOf":"x"}' },
            ])
          : family === 'deep nesting'
            ? bodyCases(family, [
                { name: `array body of depth ${DEPTH}`, body: deepArray(DEPTH) },
                { name: `object body of depth ${DEPTH}`, body: deepObject(DEPTH) },
              ])
            : family === 'arrays where objects are expected'
              ? bodyCases(
                  family,
                  ['[]', '[{}]', `[${json({ clerkUserId: me.userId })}]`, '"a string"', '123', 'null', 'true'].map(
                    (b) => ({ name: `body ${b.slice(0, 30)}`, body: b }),
                  ),
                )
              : family === 'NUL characters'
                ? bodyCases(family, [{ name: 'NUL in a key', body: `{"a\\u0000":1,"clerkUserId":${json(me.userId)}}` }])
                : family === 'odd unicode'
                  ? bodyCases(family, [
                      {
                        name: 'invalid UTF-8 bytes in a string',
                        body: Buffer.concat([
                          Buffer.from('{"message":"'),
                          Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0]),
                          Buffer.from('"}'),
                        ]),
                      },
                    ])
                  : [];
      expectNone(await run([...fieldCases(family, oddValues(family)), ...extra]));
    }, 180_000);
  }

  it('oversized bodies and fields', async () => {
    const big = (bytes: number) => `{"clerkUserId":${json(me.userId)},"message":${json('x'.repeat(bytes))}}`;
    const cases = [
      ...bodyCases('oversized', [
        { name: 'just over BODY_LIMIT', body: big(BODY_LIMIT_BYTES + 1024) },
        { name: 'just over 1 MB (the NATS payload)', body: big(1024 * 1024 + 100) },
        {
          name: '60,000 phone numbers',
          body: `{"clerkUserId":${json(me.userId)},"message":"Hi","phoneNumbers":${json(Array.from({ length: 60_000 }, (_, i) => String(90_000_000 + i)))}}`,
        },
        { name: '10,000 keys', body: objectOf(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, '1'])) },
      ]),
      ...fieldCases('oversized', [
        json('x'.repeat(100_000)),
        json('9'.repeat(10_000)),
        `[${Array(5000).fill('"x"').join(',')}]`,
      ]),
    ];
    expectNone(await run(cases));
  }, 300_000);

  it('bad JSON', async () => {
    const bodies = [
      '{',
      '{"a":',
      "{'a':1}",
      '{"a":1,}',
      'tru',
      '{"a":1}garbage',
      '{"a":"\\x"}',
      '{"a" 1}',
      'NaN',
      '{"a":undefined}',
      '[1,2',
      '\u0000',
      '{"a":"\u0001\u0002"}',
      '\ufeff{"a":1}',
      ' ',
    ];
    expectNone(
      await run(
        bodyCases('bad JSON', [
          ...bodies.map((b) => ({ name: json(b).slice(0, 30), body: b })),
          { name: 'empty body', body: '' },
        ]),
      ),
    );
  }, 180_000);

  it('wrong content types and encodings', async () => {
    const valid = json({
      clerkUserId: me.userId,
      message: 'Hi',
      phoneNumbers: ['91234567'],
      name: 'x',
      message_content: 'y',
    });
    const garbage = Buffer.from([0x1f, 0x8b, 0x00, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef]);
    expectNone(
      await run(
        bodyCases('content types', [
          { name: 'JSON as text/plain', body: valid, headers: { 'content-type': 'text/plain' } },
          {
            name: 'form-urlencoded',
            body: `clerkUserId=${me.userId}&message=Hi&phoneNumbers[]=91234567`,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          },
          {
            name: 'multipart garbage',
            body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
            headers: { 'content-type': 'multipart/form-data; boundary=x' },
          },
          { name: 'XML', body: '<a>1</a>', headers: { 'content-type': 'application/xml' } },
          {
            name: 'JSON in UTF-16',
            body: Buffer.from(valid, 'utf16le'),
            headers: { 'content-type': 'application/json; charset=utf-16' },
          },
          { name: 'unknown charset', body: valid, headers: { 'content-type': 'application/json; charset=klingon' } },
          { name: 'gzip that is not gzip', body: garbage, headers: { 'content-encoding': 'gzip' } },
          { name: 'deflate that is not deflate', body: garbage, headers: { 'content-encoding': 'deflate' } },
          { name: 'unknown encoding', body: valid, headers: { 'content-encoding': 'zstd-ish' } },
          { name: 'gzip of bad JSON', body: gzipSync('{"a":'), headers: { 'content-encoding': 'gzip' } },
          {
            name: 'gzip bomb-ish (10 MB of spaces)',
            body: gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20)),
            headers: { 'content-encoding': 'gzip' },
          },
          { name: 'no content-type', body: valid, headers: { 'content-type': '' } },
          { name: 'a JSON suffix type', body: valid, headers: { 'content-type': 'application/vnd.api+json' } },
        ]),
      ),
    );
  }, 180_000);

  it('odd path parameters and queries', async () => {
    const values = [
      'not-a-uuid',
      '00000000-0000-0000-0000-000000000000',
      '%00',
      'a%00b',
      '%ED%A0%80', // a lone surrogate, UTF-8 encoded: not valid UTF-8
      '%FF%FE',
      '%E2%80%AE',
      '%F0%9F%98%80',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      '..%2F..%2Fetc%2Fpasswd',
      '%25',
      '1e400',
      'x'.repeat(4000),
      'user_someone_else',
    ];
    const queries = [
      'limit=1e400',
      'limit=99999999999999999999',
      'limit=-0',
      'limit[]=1&limit[]=2',
      'limit[a]=1',
      'since=%00',
      'since=99999999999999999999999',
      'since=-1e400',
      'since=%ED%A0%80',
      'since[]=1',
      'category=__proto__',
      'category[]=general&category[]=marketing',
      'is_favorite=%E2%80%AE',
      'is_favorite[__proto__]=1',
      '__proto__[polluted]=1',
      'constructor[prototype][polluted]=1',
      `q=${'x'.repeat(6000)}`,
      '%=%&&=',
    ];
    expectNone(await run(paramCases('params and queries', values, queries)));
  }, 300_000);

  it(`random bodies from a seeded generator (seed ${SEED})`, async () => {
    const rng = seeded(SEED);
    const cases = endpoints.filter(hasBody).flatMap((e) =>
      Array.from({ length: 12 }, (_, i) => {
        const entries = baseEntries(e);
        const mutated = entries.map(([k, v]): [string, string] => [k, rng.next() < 0.5 ? randomJson(rng) : v]);
        const body = rng.next() < 0.2 ? randomJson(rng) : objectOf(mutated);
        return {
          family: 'random',
          name: `random #${i + 1}`,
          method: e.method,
          path: pathOf(e),
          body,
          headers: { 'content-type': 'application/json' },
        } satisfies Case;
      }),
    );
    expectNone(await run(cases));
  }, 180_000);

  it('every service is still up and ready afterwards', async () => {
    for (const h of sys.services) {
      expect({ label: h.label, running: h.process.running }).toEqual({ label: h.label, running: true });
      expect({ label: h.label, readyz: (await fetch(`${h.url}/readyz`)).status }).toEqual({
        label: h.label,
        readyz: 200,
      });
    }
    // And a valid call still works as before.
    const res = await fetch(`${sys.gateway.url}/api/templates/${me.userId}`, {
      headers: { authorization: `Bearer ${me.token}` },
    });
    expect(res.status).toBe(200);
  });
});
