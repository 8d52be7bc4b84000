import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, type EventEnvelope } from '@bns/contracts';
import {
  connectNats,
  ensureEventsStream,
  EventBus,
  openDatabase,
  OutboxPublisher,
  OutboxRepository,
  SERVICE_ENV,
  Transactions,
} from '@bns/service-kit';
import { sleep, startNats, startPostgres, waitFor, type Nats, type Postgres } from '@bns/testing';
import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { SESSIONS_ENTITIES, SESSIONS_MIGRATIONS } from '../../database/schema.js';
import { MessageEvents } from '../message-events.service.js';
import { SendsRepository } from '../sends.repository.js';
import { LidsRepository } from '../lids.repository.js';
import { TEST_ENV } from './harness.js';

type Stored = EventEnvelope & Record<string, any> & { subject: string };

/** Every event JetStream stored (after its msg-id dedupe). */
async function storedEvents(nc: NatsConnection): Promise<Stored[]> {
  const consumer = await jetstream(nc).consumers.get(EVENTS_STREAM);
  const out: Stored[] = [];
  const messages = await consumer.fetch({ max_messages: 10_000, expires: 1000 });
  for await (const m of messages) {
    out.push({ ...m.json<EventEnvelope>(), subject: m.subject } as Stored);
    if (m.info.pending === 0) break;
  }
  return out;
}

describe('MessageEvents (in-process, real Postgres and NATS): receipts and inbound messages through the outbox', () => {
  let pg: Postgres;
  let nats: Nats;
  let natsPort: number;
  let natsStore: string;
  let db: DataSource;
  let nc: NatsConnection;
  let module: TestingModule;
  let events: MessageEvents;
  let sends: SendsRepository;
  let outbox: OutboxRepository;
  let publisher: OutboxPublisher;

  beforeAll(async () => {
    natsStore = mkdtempSync(join(tmpdir(), 'bns-nats-keep-'));
    [pg, nats] = await Promise.all([startPostgres(), startNats({ storeDir: natsStore })]);
    natsPort = nats.port;
    db = await openDatabase({
      url: pg.url,
      schema: 'sessions',
      entities: SESSIONS_ENTITIES,
      migrations: SESSIONS_MIGRATIONS,
    });
    nc = await connectNats(nats.url, 'message-events-test');
    await ensureEventsStream(nc);
    module = await Test.createTestingModule({
      providers: [
        { provide: DataSource, useValue: db },
        { provide: Transactions, useValue: new Transactions(db) },
        { provide: SERVICE_ENV, useValue: TEST_ENV },
        { provide: EventBus, useValue: new EventBus(nc) },
        SendsRepository,
        LidsRepository,
        OutboxRepository,
        OutboxPublisher,
        MessageEvents,
      ],
    }).compile();
    events = module.get(MessageEvents);
    sends = module.get(SendsRepository);
    outbox = module.get(OutboxRepository);
    publisher = module.get(OutboxPublisher);
  }, 60_000);

  afterAll(async () => {
    await module?.close();
    await nc?.close();
    await db?.destroy();
    await Promise.all([nats?.stop(), pg?.stop()]);
  });

  const sent = async (userId: string, key: string, messageId: string) => {
    await sends.claim(userId, key, 'job', '91234567', 'hello');
    await sends.markSent(userId, key, messageId, new Date());
  };
  /** `n` sent job messages of `userId`: message ids `msg-<tag>-<i>`, keys `job-<tag>:9123<i>`. */
  const sentMany = async (userId: string, tag: string, n: number) => {
    for (let i = 0; i < n; i++) await sent(userId, `job-${tag}:9123${String(i).padStart(4, '0')}`, `msg-${tag}-${i}`);
  };
  /**
   * Every writing transaction takes a transaction id, so the distance between two readings counts them;
   * a reading takes an id of its own too.
   */
  const xactId = async () => Number((await db.query('SELECT pg_current_xact_id()::text AS id'))[0].id);

  it('publishes each receipt once (a repeated or older ack is no change), and an ack that overtakes its send once the send is recorded', async () => {
    await sent('user_r', 'job-r:91234567', 'msg-r-1');
    await Promise.all([
      events.recordAck('user_r', 'msg-r-1', 'delivered'),
      events.recordAck('user_r', 'msg-r-1', 'delivered'),
    ]);
    await events.recordAck('user_r', 'msg-r-1', 'read');
    await events.recordAck('user_r', 'msg-r-1', 'delivered'); // late and older: nothing
    await events.recordAck('user_r', 'msg-r-1', 'sent'); // jobs reports sent itself
    const early = events.recordAck('user_r', 'msg-r-2', 'delivered'); // before the ledger knows msg-r-2
    await sleep(400);
    await sent('user_r', 'job-r:91234568', 'msg-r-2');
    await early;
    await publisher.drain();
    const statuses = (await storedEvents(nc)).filter(
      (e) => e.subject === 'events.message.status' && e.userId === 'user_r',
    );
    expect(statuses.map((e) => [e.messageId, e.status, e.jobId, e.recipient, e.content])).toEqual([
      ['msg-r-1', 'delivered', 'job-r', '91234567', 'hello'],
      ['msg-r-1', 'read', 'job-r', '91234567', 'hello'],
      ['msg-r-2', 'delivered', 'job-r', '91234568', 'hello'],
    ]);
    expect(await outbox.count()).toBe(0);
  });

  it("leaves the send's ledger row as its sent mark wrote it: a receipt is an event, not a row version", async () => {
    await sent('user_v', 'job-v:91234567', 'msg-v-1');
    const version = async () =>
      (await db.query(`SELECT xmin::text AS x, ctid::text AS c FROM sessions.sends WHERE user_id = 'user_v'`))[0];
    const before = await version();
    await events.recordAck('user_v', 'msg-v-1', 'delivered');
    await events.recordAck('user_v', 'msg-v-1', 'read');
    await events.recordAck('user_v', 'msg-v-1', 'failed', 'too late'); // after read: nothing
    expect(await version()).toEqual(before);
    await publisher.drain();
    const statuses = (await storedEvents(nc)).filter(
      (e) => e.subject === 'events.message.status' && e.userId === 'user_v',
    );
    expect(statuses.map((e) => e.status)).toEqual(['delivered', 'read']);
  });

  it('writes a burst of acks in a few transactions: one event per receipt, delivered before read for every message', async () => {
    const n = 150;
    await sentMany('user_b', 'b', n);
    const before = await xactId();
    const acks: Promise<void>[] = [];
    for (let i = 0; i < n; i++) acks.push(events.recordAck('user_b', `msg-b-${i}`, 'delivered'));
    for (let i = 0; i < n; i++) acks.push(events.recordAck('user_b', `msg-b-${i}`, 'read'));
    acks.push(events.recordAck('user_b', 'msg-b-0', 'delivered')); // late and older: nothing
    await Promise.all(acks);
    const used = (await xactId()) - before;
    await publisher.drain();
    const statuses = (await storedEvents(nc)).filter(
      (e) => e.subject === 'events.message.status' && e.userId === 'user_b',
    );
    expect(statuses).toHaveLength(2 * n);
    for (let i = 0; i < n; i++) {
      expect(statuses.filter((e) => e.messageId === `msg-b-${i}`).map((e) => e.status)).toEqual(['delivered', 'read']);
    }
    // 300 acks, one at a time, would be 300 transactions; batched they are a handful (plus the outbox deletes).
    expect(used).toBeLessThan(20);
  });

  it("acks that trickle in milliseconds apart (the spec's pace) share a transaction instead of one each", async () => {
    const n = 6;
    await sentMany('user_t', 't', n);
    const before = await xactId();
    const acks: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      acks.push(events.recordAck('user_t', `msg-t-${i}`, 'delivered'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(acks);
    // One for the acks (the first waited for the others), more only if a slow machine stretched the 2 ms
    // pauses past the 20 ms the first one waits; the second reading of the id takes one itself. One at a
    // time, they were five or six.
    expect((await xactId()) - before - 1).toBeLessThanOrEqual(3);
    await publisher.drain();
    const statuses = (await storedEvents(nc)).filter(
      (e) => e.subject === 'events.message.status' && e.userId === 'user_t',
    );
    expect(statuses.map((e) => e.messageId).sort()).toEqual(Array.from({ length: n }, (_, i) => `msg-t-${i}`).sort());
  });

  it('pairs a LID with its number from a receipt, and gives LID-only replies their number (by the pair or the quoted message), never a guess', async () => {
    const lids = module.get(LidsRepository);
    for (const [key, to, id] of [
      ['job-l:91230001', '91230001', 'msg-l-1'],
      ['job-l:91230002', '91230002', 'msg-l-2'],
    ] as const) {
      await sends.claim('user_l', key, 'job', to, 'hello');
      await sends.markSent('user_l', key, id, new Date());
    }
    // A LID-only receipt: the number is the send's, and the pair is remembered.
    await events.recordAck('user_l', 'msg-l-1', 'delivered', undefined, '111111111111111@lid');
    const at = new Date();
    await events.recordInbound('user_l', { lid: '111111111111111@lid', text: 'STOP', at, messageId: 'in-l-1' });
    // Unknown LID, but it quotes our message: that message's number (and the pair is learned).
    await events.recordInbound('user_l', {
      lid: '222222222222222@lid',
      text: 'yes please',
      at,
      messageId: 'in-l-2',
      quotedMessageId: 'msg-l-2',
    });
    await events.recordInbound('user_l', { lid: '333333333333333@lid', text: 'who?', at, messageId: 'in-l-3' });
    // Pairs are per account: another user's LID-only message is not matched with user_l's table.
    await events.recordInbound('user_m', { lid: '111111111111111@lid', text: 'STOP', at, messageId: 'in-m-1' });
    await publisher.drain();
    const stored = (await storedEvents(nc)).filter((e) => e.userId === 'user_l' || e.userId === 'user_m');
    expect(stored.find((e) => e.subject === 'events.message.status' && e.messageId === 'msg-l-1')).toMatchObject({
      status: 'delivered',
      recipient: '91230001',
      lid: '111111111111111@lid',
    });
    const received = stored
      .filter((e) => e.subject === 'events.message.received')
      .map((e) => [e.userId, e.messageId, e.from, e.lid, e.quotedMessageId]);
    expect(received).toEqual([
      ['user_l', 'in-l-1', '85291230001', '111111111111111@lid', undefined],
      ['user_l', 'in-l-2', '85291230002', '222222222222222@lid', 'msg-l-2'],
      ['user_l', 'in-l-3', '', '333333333333333@lid', undefined],
      ['user_m', 'in-m-1', '', '111111111111111@lid', undefined],
    ]);
    expect(await lids.count('user_l')).toBe(2);
    expect(await lids.phoneOf('user_l', '222222222222222@lid')).toBe('85291230002');
  });

  it("stores the pairs a campaign's sends name in a few shared statements, each in time for the reply that follows it", async () => {
    const lids = module.get(LidsRepository);
    const users = 120;
    const before = await xactId();
    const learned = Array.from({ length: users }, (_, i) =>
      events.learnContact(`user_p${i}`, `4${String(i).padStart(14, '0')}@lid`, `8529${String(i).padStart(7, '0')}`),
    );
    // Not awaited: a LID-only reply right behind its pairing is matched with it all the same.
    const replied = events.recordInbound('user_p7', {
      lid: `4${String(7).padStart(14, '0')}@lid`,
      text: 'STOP',
      at: new Date(),
      messageId: 'in-p-7',
    });
    await Promise.all([...learned, replied]);
    // One pair at a time was 120 transactions; shared, they are a handful (the reply and the reading add two).
    expect((await xactId()) - before).toBeLessThan(15);
    for (const i of [0, 7, users - 1]) {
      expect(await lids.phoneOf(`user_p${i}`, `4${String(i).padStart(14, '0')}@lid`)).toBe(
        `8529${String(i).padStart(7, '0')}`,
      );
    }
    // Pairs stay with their account.
    expect(await lids.phoneOf('user_p8', `4${String(7).padStart(14, '0')}@lid`)).toBeUndefined();
    await publisher.drain();
    const reply = (await storedEvents(nc)).find(
      (e) => e.subject === 'events.message.received' && e.messageId === 'in-p-7',
    );
    expect(reply).toMatchObject({ userId: 'user_p7', from: '85290000007' });
  });

  it('keeps receipts and inbound messages in the outbox while NATS is down, and publishes them once it is back', async () => {
    await sent('user_n', 'job-n:91234569', 'msg-n-1');
    await nats.stop();
    await events.recordAck('user_n', 'msg-n-1', 'delivered');
    await events.recordInbound('user_n', {
      from: '85291234569',
      text: 'ST\u0000OP',
      at: new Date(),
      messageId: 'in-n-1',
    }); // NUL: Postgres refuses it
    await publisher.drain();
    expect(await outbox.count()).toBe(2); // written with the state change, not published yet
    nats = await startNats({ storeDir: natsStore, port: natsPort });
    await waitFor(
      async () => (await publisher.sweep(0)) > 0 || (await outbox.count()) === 0,
      30_000,
      500,
      'the outbox to drain',
    );
    expect(await outbox.count()).toBe(0);
    const reader = await connect({ servers: nats.url });
    try {
      const stored = (await storedEvents(reader)).filter((e) => e.userId === 'user_n');
      expect(stored.map((e) => [e.subject, e.status ?? e.text])).toEqual([
        ['events.message.status', 'delivered'],
        ['events.message.received', 'STOP'],
      ]);
      expect(stored[1]).toMatchObject({
        from: '85291234569',
        messageId: 'in-n-1',
        eventId: expect.stringMatching(/^message-received:/),
      });
    } finally {
      await reader.close();
    }
  });
});
