import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { INTEGRATIONS_LIMITS } from '@bns/contracts';
import { SERVICE_ENV } from '@bns/service-kit';
import { CLOCK, ManualClock } from '../../clock/clock.js';
import type { IntegrationsEnv } from '../../config/env.js';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { Dispatcher } from '../dispatcher.js';
import { SealedSecrets, WRONG_SECRET_KEY } from '../sealed-secrets.js';
import { newWebhookSecret, webhookIdOf } from '../signing.js';
import { WebhooksRepository, type EndpointRow } from '../webhooks.repository.js';

/**
 * The delivery queue against a real Postgres and a real local HTTP receiver, on a clock the test
 * moves: the day of retries, the 5-day disable and the 24 h secret overlap take milliseconds.
 */

interface Received {
  headers: Record<string, string>;
  body: string;
}

let ip: InProcess;
let repo: WebhooksRepository;
let dispatcher: Dispatcher;
let secrets: SealedSecrets;
const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
let server: Server;
let url: string;
let answer = 200;
let received: Received[] = [];
let seq = 0;

const env = {
  INTEGRATIONS_SECRET_KEY: randomBytes(32).toString('base64'),
  WEBHOOK_ALLOWED_HOSTS: ['127.0.0.1'],
  INTEGRATIONS_CONSUMER: 'test',
  INTEGRATIONS_ACK_WAIT_MS: 10_000,
  WEBHOOK_CONCURRENCY: 8,
  WEBHOOK_POLL_MS: 1000,
  WEBHOOK_LEASE_MS: 30_000,
  WEBHOOK_RETRY_SCALE: 1,
  RETENTION_PURGE_EVERY_MS: 86_400_000,
} satisfies IntegrationsEnv;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.statusCode = answer;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  ip = await inProcess([
    WebhooksRepository,
    SealedSecrets,
    Dispatcher,
    { provide: SERVICE_ENV, useValue: env },
    { provide: CLOCK, useValue: clock },
  ]);
  repo = ip.module.get(WebhooksRepository);
  dispatcher = ip.module.get(Dispatcher);
  secrets = ip.module.get(SealedSecrets);
}, 60_000);

afterAll(async () => {
  await ip?.stop();
  server?.close();
});

beforeEach(async () => {
  // Each test sees only its own deliveries (earlier ones may fall due as the clock moves on).
  await ip.db.query('DELETE FROM integrations.webhook_deliveries');
  received = [];
  answer = 200;
});

/** An endpoint as the service stores it (its secret sealed), with its secret in plain text beside it. */
async function endpoint(): Promise<EndpointRow & { plain: string }> {
  const plain = newWebhookSecret();
  const created = await repo.insertUnlessFull(
    `user-${++seq}`,
    { url, events: ['message.sent'], description: '', secret: secrets.seal(plain) },
    10,
    clock.now(),
  );
  if (created === 'full') throw new Error('full');
  return { ...created, plain };
}

async function queue(e: EndpointRow): Promise<string> {
  const eventId = `event-${++seq}`;
  await repo.run((em) =>
    repo.fanOut(
      em,
      {
        userId: e.user_id,
        eventId,
        webhookId: webhookIdOf(eventId),
        type: 'message.sent',
        payload: { type: 'message.sent', timestamp: clock.now().toISOString(), data: { n: seq } },
        eventAt: clock.now(),
      },
      clock.now(),
    ),
  );
  return eventId;
}

/** Sends what is due now and waits for the outcomes to be recorded. */
async function sendDue(): Promise<number> {
  const n = await dispatcher.tick();
  await dispatcher.idle();
  return n;
}

const deliveryOf = async (e: EndpointRow) => (await repo.deliveries(e.user_id, e.id, 10))[0]!;

describe('retries', () => {
  it('retries a failing endpoint on the schedule with the same webhook-id, then records it failed after about a day', async () => {
    const e = await endpoint();
    const eventId = await queue(e);
    answer = 500;
    const start = clock.now().getTime();
    expect(await sendDue()).toBe(1);
    for (const step of INTEGRATIONS_LIMITS.webhookRetryScheduleMs) {
      // Not before its time (the schedule less 20 % jitter)...
      clock.advance(step * 0.79);
      expect(await sendDue()).toBe(0);
      // ...and by its time plus 20 %.
      clock.advance(step * 0.42);
      expect(await sendDue()).toBe(1);
    }
    const d = await deliveryOf(e);
    expect(d).toMatchObject({ status: 'failed', attempts: 8, httpStatus: 500, nextAttemptAt: null });
    expect(received).toHaveLength(8);
    expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set([webhookIdOf(eventId)]));
    const hours = (clock.now().getTime() - start) / 3600_000;
    expect(hours).toBeGreaterThan(20);
    expect(hours).toBeLessThan(40);
    clock.advance(24 * 3600_000);
    expect(await sendDue()).toBe(0);
  });

  it('a success clears the failing state; resend sends again with the same id', async () => {
    const e = await endpoint();
    await queue(e);
    answer = 503;
    await sendDue();
    expect((await repo.find(e.user_id, e.id))!.failing_since).not.toBeNull();
    answer = 200;
    clock.advance(10_000);
    await sendDue();
    const d = await deliveryOf(e);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 2, httpStatus: 200 });
    expect((await repo.find(e.user_id, e.id))!.failing_since).toBeNull();
    await repo.resend(e.user_id, e.id, d.id, clock.now());
    await sendDue();
    expect(received.map((r) => r.headers['webhook-id'])).toEqual([d.webhookId, d.webhookId, d.webhookId]);
  });
});

describe('disabling', () => {
  it('disables an endpoint whose deliveries failed for 5 days, and sends it nothing more', async () => {
    const e = await endpoint();
    answer = 500;
    await queue(e);
    await sendDue();
    for (let day = 1; day <= 4; day++) {
      clock.advance(24 * 3600_000);
      await queue(e);
      await sendDue();
      expect((await repo.find(e.user_id, e.id))!.enabled).toBe(true);
    }
    clock.advance(24 * 3600_000 + 60_000);
    await queue(e);
    await sendDue();
    const after = (await repo.find(e.user_id, e.id))!;
    expect(after).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const before = received.length;
    await queue(e);
    clock.advance(3600_000);
    expect(await sendDue()).toBe(0);
    expect(received).toHaveLength(before);
    // Enabled again: what waited goes out.
    answer = 200;
    await repo.update(e.user_id, e.id, { enabled: true });
    expect(await sendDue()).toBeGreaterThan(0);
    expect((await repo.find(e.user_id, e.id))!).toMatchObject({
      enabled: true,
      disabled_reason: null,
      failing_since: null,
    });
  });
});

describe('secret rotation', () => {
  it('signs with the old and the new secret for 24 h, then with the new one only', async () => {
    const e = await endpoint();
    const old = e.plain;
    const rotated = { secret: newWebhookSecret() };
    await repo.rotate(
      e.user_id,
      e.id,
      secrets.seal(rotated.secret),
      new Date(clock.now().getTime() + INTEGRATIONS_LIMITS.webhookSecretOverlapMs),
    );
    await queue(e);
    await sendDue();
    const verify = (secret: string, r: Received) => {
      // The receiver checks the timestamp against its own clock: verify as of the moment it was signed.
      const wh = new Webhook(secret);
      const ts = Number(r.headers['webhook-timestamp']);
      return wh.verify(r.body, { ...r.headers, 'webhook-timestamp': String(ts) }) !== undefined;
    };
    const realNow = Date.now;
    try {
      Date.now = () => clock.now().getTime();
      expect(verify(rotated.secret, received[0]!)).toBe(true);
      expect(verify(old, received[0]!)).toBe(true);
      clock.advance(INTEGRATIONS_LIMITS.webhookSecretOverlapMs + 1000);
      await queue(e);
      await sendDue();
      expect(verify(rotated.secret, received[1]!)).toBe(true);
      expect(() => verify(old, received[1]!)).toThrow();
    } finally {
      Date.now = realNow;
    }
  });
});

describe('one slow endpoint', () => {
  it("takes one slot, never another endpoint's turn", async () => {
    const slow = await endpoint();
    const fast = await endpoint();
    for (let i = 0; i < 5; i++) await queue(slow);
    await queue(fast);
    // One claim: at most one delivery per endpoint.
    expect(await dispatcher.tick()).toBe(2);
    await dispatcher.idle();
  });
});

describe('signing secrets at rest', () => {
  it('are sealed with AES-256-GCM: the row holds no secret, and another key cannot open it', async () => {
    const e = await endpoint();
    const [stored] = (await ip.db.query('SELECT secret FROM integrations.webhook_endpoints WHERE id = $1', [e.id])) as {
      secret: string;
    }[];
    expect(stored!.secret).toMatch(/^v1\./);
    expect(stored!.secret).not.toContain(e.plain.slice('whsec_'.length, 20));
    expect(secrets.open(stored!.secret)).toBe(e.plain);
    const other = new SealedSecrets(repo, { INTEGRATIONS_SECRET_KEY: randomBytes(32).toString('hex') });
    expect(() => other.open(stored!.secret)).toThrow(/could not be opened/);
    // Its deliveries are signed with the plain secret.
    await queue(e);
    await sendDue();
    const realNow = Date.now;
    try {
      Date.now = () => clock.now().getTime();
      expect(new Webhook(e.plain).verify(received[0]!.body, received[0]!.headers)).toBeDefined();
    } finally {
      Date.now = realNow;
    }
  });

  it('stops the start with a clear error under another key, and seals secrets left in plain text', async () => {
    // The first start with a key writes the key check row; a start under another key cannot open it.
    await secrets.onModuleInit();
    const other = new SealedSecrets(repo, { INTEGRATIONS_SECRET_KEY: randomBytes(32).toString('base64') });
    await expect(other.onModuleInit()).rejects.toThrow(WRONG_SECRET_KEY);
    const plain = newWebhookSecret();
    const legacy = await repo.insertUnlessFull(
      `user-${++seq}`,
      { url, events: ['message.sent'], description: '', secret: plain },
      10,
      clock.now(),
    );
    if (legacy === 'full') throw new Error('full');
    await secrets.onModuleInit();
    const [stored] = (await ip.db.query('SELECT secret FROM integrations.webhook_endpoints WHERE id = $1', [
      legacy.id,
    ])) as { secret: string }[];
    expect(stored!.secret).toMatch(/^v1\./);
    expect(secrets.open(stored!.secret)).toBe(plain);
  });
});
