import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, type EventEnvelope } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import {
  api,
  devSignIn,
  sleep,
  startNats,
  startPostgres,
  startSystem,
  waitFor,
  type Nats,
  type Postgres,
  type System,
} from '@bns/testing';
import { linkUser, type LinkedUser } from './link-helpers.js';

type Stored = EventEnvelope & Record<string, any> & { subject: string };

const DELIVERED_MS = 1500;
const READ_MS = 2500;
const PER_ROUND = 30;

/**
 * Delivered/read receipts and inbound messages are durable, never fire-and-forget: they go through
 * the sessions outbox, so a Postgres outage or a NATS restart while they arrive delays them and
 * loses none. Real sessions + gateway processes, real Postgres and
 * nats-server, stopped and restarted on the same ports and data.
 */
describe('sessions events survive Postgres and NATS outages (spawned services)', () => {
  let root: string;
  let pg: Postgres;
  let nats: Nats;
  let pgPort: number;
  let natsPort: number;
  let sys: System;
  let user: LinkedUser;
  const figures: string[] = [];

  const startPg = () => startPostgres({ dataDir: join(root, 'pg', 'data'), port: pgPort || undefined });
  const startBroker = () => startNats({ storeDir: join(root, 'nats'), port: natsPort || undefined });

  /** Every event JetStream stored (after its msg-id dedupe), read on a fresh connection. */
  async function storedEvents(): Promise<Stored[]> {
    const nc = await connect({ servers: nats.url });
    try {
      const consumer = await jetstream(nc).consumers.get(EVENTS_STREAM);
      const out: Stored[] = [];
      const messages = await consumer.fetch({ max_messages: 100_000, expires: 1500 });
      for await (const m of messages) {
        out.push({ ...m.json<EventEnvelope>(), subject: m.subject } as Stored);
        if (m.info.pending === 0) break;
      }
      return out;
    } finally {
      await nc.close();
    }
  }
  const receiptsOf = async (jobId: string) => {
    const keys = (await storedEvents())
      .filter((e) => e.subject === 'events.message.status' && e.jobId === jobId)
      .map((e) => `${e.messageId}:${e.status}`);
    return { stored: keys.length, unique: new Set(keys).size };
  };

  /** Sends `n` messages of one job through sessions.send, each once (retrying only what did not go out). */
  async function sendRound(jobId: string, firstPhone: number): Promise<void> {
    const nc: NatsConnection = await connect({ servers: nats.url });
    try {
      const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 10_000 });
      for (let i = 0; i < PER_ROUND; i++) {
        const to = String(firstPhone + i);
        await waitFor(
          async () =>
            (
              await rpc.call('sessions.send', {
                userId: user.userId,
                to,
                text: `round ${jobId} #${i}`,
                idempotencyKey: `${jobId}:${to}`,
              })
            ).status === 'sent',
          20_000,
          200,
        );
      }
    } finally {
      await nc.close();
    }
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'bns-durable-'));
    chmodSync(root, 0o755); // Postgres runs as its own user and must reach its data folder
    [pg, nats] = await Promise.all([startPg(), startBroker()]);
    pgPort = pg.port;
    natsPort = nats.port;
    sys = await startSystem({
      shards: 1,
      services: ['sessions'],
      postgres: pg,
      nats,
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_DELIVERED_DELAY_MS: String(DELIVERED_MS),
        SIM_READ_DELAY_MS: String(READ_MS),
      },
    });
    user = await linkUser(sys.gateway.url, 'durable@example.com');
  }, 180_000);

  afterAll(async () => {
    user?.tab.close();
    await sys?.stop();
    await Promise.all([nats?.stop(), pg?.stop()]);
    if (root) rmSync(root, { recursive: true, force: true });
    if (figures.length > 0) console.log(`durable sessions events:\n  ${figures.join('\n  ')}`);
  });

  for (const outageMs of [2000, 15_000]) {
    it(`a ${outageMs / 1000} s Postgres outage while receipts and inbound messages arrive loses none of them`, async () => {
      const jobId = `job-pg${outageMs}`;
      await sendRound(jobId, 61_000_000 + outageMs);
      // Every receipt of the round is due 1.5 s and 2.5 s after its send: they arrive during the outage.
      await pg.stop();
      const inbound = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          api(sys.gateway.url, user.token).post('/dev/simulator/inbound', {
            from: `6200000${i}`,
            text: `reply ${outageMs} #${i}`,
          }),
        ),
      );
      expect(inbound.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]); // the phone got them; Postgres is down
      await sleep(outageMs);
      pg = await startPg();
      const t0 = Date.now();
      await waitFor(
        async () => (await receiptsOf(jobId)).unique === 2 * PER_ROUND,
        60_000,
        500,
        `all ${2 * PER_ROUND} receipts of ${jobId}`,
      );
      const ids = new Set(inbound.map((r) => r.body.messageId));
      await waitFor(
        async () =>
          (await storedEvents()).filter((e) => e.subject === 'events.message.received' && ids.has(e.messageId))
            .length === ids.size,
        60_000,
        500,
        'the inbound messages',
      );
      const { stored, unique } = await receiptsOf(jobId);
      figures.push(
        `Postgres down ${outageMs} ms: ${unique}/${2 * PER_ROUND} receipts and ${ids.size}/5 inbound messages stored (lost 0), ${stored - unique} duplicates, all in ${Date.now() - t0} ms after Postgres was back`,
      );
      expect(stored).toBe(unique);
    }, 180_000);
  }

  it('a NATS restart while receipts and inbound messages arrive loses none of them', async () => {
    const jobId = 'job-nats';
    await sendRound(jobId, 63_000_000);
    const inbound = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api(sys.gateway.url, user.token).post('/dev/simulator/inbound', {
          from: `6300000${i}`,
          text: `nats reply #${i}`,
        }),
      ),
    );
    expect(inbound.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await nats.stop(); // receipts are due in 1.5 s and 2.5 s, inbound messages may be mid-publish
    await sleep(3000);
    nats = await startBroker();
    const t0 = Date.now();
    await waitFor(
      async () => (await receiptsOf(jobId)).unique === 2 * PER_ROUND,
      60_000,
      500,
      `all ${2 * PER_ROUND} receipts of ${jobId}`,
    );
    const ids = new Set(inbound.map((r) => r.body.messageId));
    await waitFor(
      async () =>
        (await storedEvents()).filter((e) => e.subject === 'events.message.received' && ids.has(e.messageId)).length ===
        ids.size,
      60_000,
      500,
      'the inbound messages',
    );
    figures.push(
      `NATS down 3000 ms: ${2 * PER_ROUND}/${2 * PER_ROUND} receipts and ${ids.size}/5 inbound messages stored (lost 0), all within ${Date.now() - t0} ms after NATS was back`,
    );
  }, 180_000);

  it("the inbound call is the simulated engine's only, validates its input, and needs a linked phone", async () => {
    const bad = await api(sys.gateway.url, user.token).post('/dev/simulator/inbound', { from: '12', text: '' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('from must be 8 to 15 digits');
    const nul = await api(sys.gateway.url, user.token).post('/dev/simulator/inbound', {
      from: '91234567',
      text: 'a\u0000b',
    });
    expect(nul.status).toBe(400);
    const stranger = await devSignIn(sys.gateway.url, 'nobody-linked@example.com');
    const notLinked = await api(sys.gateway.url, stranger.token).post('/dev/simulator/inbound', {
      from: '91234567',
      text: 'hi',
    });
    expect(notLinked.status).toBe(409);
  }, 60_000);
});
