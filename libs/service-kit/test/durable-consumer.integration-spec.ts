import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JsMsg } from '@nats-io/jetstream';
import { startNats, type Nats } from '@bns/testing';
import { connectNats } from '../src/nats/connection.js';
import {
  DurableConsumer,
  Poison,
  SKIP,
  type ConsumerLogger,
  type DurableConsumerOptions,
} from '../src/nats/durable-consumer.js';

const STREAM = 'DURABLE_TEST';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(25);
  }
}

interface Item {
  id: string;
  phone: string;
}

/** Log lines, as the consumer would write them. */
function recordingLogger(): ConsumerLogger & { lines: Array<{ level: string; fields: unknown; message: unknown }> } {
  const lines: Array<{ level: string; fields: unknown; message: unknown }> = [];
  const at = (level: string) => (fields: unknown, message?: unknown) => void lines.push({ level, fields, message });
  return { lines, log: at('log'), warn: at('warn'), error: at('error') } as ConsumerLogger & { lines: typeof lines };
}

describe('DurableConsumer against a real NATS', () => {
  const storeDir = mkdtempSync(join(tmpdir(), 'bns-durable-nats-'));
  let nats: Nats;
  let nc: NatsConnection;
  let consumers: Array<DurableConsumer<Item>> = [];
  let n = 0;

  beforeAll(async () => {
    nats = await startNats({ storeDir });
    nc = await connectNats(nats.url, 'durable-consumer-test');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: STREAM,
      subjects: ['dtest.>'],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
    });
  });
  afterEach(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    consumers = [];
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  /** A consumer of its own subject, decoding `{ id, phone }` and refusing anything else. */
  function consumer(overrides: Partial<DurableConsumerOptions<Item>> = {}) {
    const name = `t${++n}`;
    const subject = `dtest.${name}`;
    const logger = recordingLogger();
    const options: DurableConsumerOptions<Item> = {
      stream: STREAM,
      durable: name,
      filterSubject: subject,
      ackWaitMs: 30_000,
      maxDeliver: 5,
      maxAckPending: 100,
      redelivery: { baseMs: 300, maxMs: 1000 },
      restartDelayMs: 200,
      logger,
      decode: (body) => {
        const b = body as Partial<Item> | undefined;
        if (b && typeof b.id === 'string' && b.id.startsWith('skip')) return SKIP;
        return b && typeof b.id === 'string' && typeof b.phone === 'string'
          ? { id: b.id, phone: b.phone }
          : new Poison('id or phone missing');
      },
      handle: async () => undefined,
      ...overrides,
    };
    const c = new DurableConsumer<Item>(nc, options);
    consumers.push(c);
    const publish = async (body: unknown) => {
      await jetstream(nc).publish(subject, typeof body === 'string' ? body : JSON.stringify(body));
    };
    const info = async () => (await jetstreamManager(nc)).consumers.info(STREAM, name);
    return { c, subject, name, logger, publish, info };
  }

  it('acks a message once its handler resolved, and leaves nothing pending', async () => {
    const seen: Item[] = [];
    const t = consumer({ handle: async (item) => void seen.push(item) });
    await t.c.start();
    await t.publish({ id: 'a', phone: '91234567' });
    await until(() => seen.length === 1);
    expect(seen[0]).toEqual({ id: 'a', phone: '91234567' });
    await until(async () => (await t.info()).ack_floor.stream_seq > 0);
    const info = await t.info();
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
    // The consumer was created with the settings it was given.
    expect(info.config.max_deliver).toBe(5);
    expect(info.config.ack_wait).toBe(30_000 * 1_000_000);
  });

  it('redelivers after a failed handler, with the back-off delay, then acks', async () => {
    const tries: Array<{ at: number; delivery: number }> = [];
    const t = consumer({
      handle: async (_item, msg: JsMsg) => {
        tries.push({ at: Date.now(), delivery: msg.info.deliveryCount });
        if (tries.length < 3) throw new Error('database down for 85291234567');
      },
      describe: (item) => ({ id: item.id }),
    });
    await t.c.start();
    await t.publish({ id: 'b', phone: '91234567' });
    await until(() => tries.length === 3);
    expect(tries.map((x) => x.delivery)).toEqual([1, 2, 3]);
    // backoffMs(1) = 300 ms, backoffMs(2) = 600 ms (some slack for timers).
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(250);
    expect(tries[2]!.at - tries[1]!.at).toBeGreaterThanOrEqual(550);
    await until(async () => (await t.info()).num_ack_pending === 0);
    const retries = t.logger.lines.filter((l) => l.level === 'warn');
    expect(retries).toHaveLength(2);
    expect(retries[0]!.fields).toMatchObject({ id: 'b', delivery: 1 });
    // The error's message is in the log without the number it quoted.
    expect(JSON.stringify(t.logger.lines)).not.toContain('85291234567');
  });

  it('terminates after the last delivery', async () => {
    let tries = 0;
    const t = consumer({
      maxDeliver: 2,
      redelivery: { baseMs: 100 },
      handle: async () => {
        tries++;
        throw new Error('always');
      },
    });
    await t.c.start();
    await t.publish({ id: 'c', phone: '91234567' });
    await until(() => t.logger.lines.some((l) => l.level === 'error'));
    await sleep(500);
    expect(tries).toBe(2);
    expect(t.logger.lines.find((l) => l.level === 'error')!.message).toMatch(/dropped after the last delivery/);
  });

  it('terminates a message it cannot decode, logging no part of it, and goes on with the next', async () => {
    const seen: string[] = [];
    const t = consumer({ handle: async (item) => void seen.push(item.id) });
    await t.c.start();
    await t.publish('not json 91234567 secret-token');
    await t.publish({ phone: '98765432', text: 'STOP please' });
    await t.publish({ id: 'skip-me', phone: '91234567' });
    await t.publish({ id: 'd', phone: '91234567' });
    await until(() => seen.length === 1);
    expect(seen).toEqual(['d']);
    // Nothing stays pending (nats-server 2.9 ignores `+TERM <reason>`, so a term must carry no reason).
    await until(async () => (await t.info()).num_ack_pending === 0);
    expect((await t.info()).ack_floor.consumer_seq).toBe(4);
    const dropped = t.logger.lines.filter((l) => l.message === 'malformed message dropped');
    expect(dropped).toHaveLength(2);
    expect(dropped[0]!.fields).toMatchObject({
      durable: t.name,
      subject: t.subject,
      seq: expect.any(Number),
      problem: 'id or phone missing',
    });
    const logged = JSON.stringify(t.logger.lines);
    for (const secret of ['91234567', '98765432', 'STOP', 'secret-token']) expect(logged).not.toContain(secret);
    // Terminated and skipped messages are not redelivered.
    await sleep(500);
    expect(seen).toEqual(['d']);
    expect((await t.info()).num_redelivered).toBe(0);
  });

  it('hands a batch to handleBatch, and one by one to handle when the batch fails', async () => {
    const batches: string[][] = [];
    const done: string[] = [];
    const t = consumer({
      batchMax: 10,
      handleBatch: async (ds) => {
        batches.push(ds.map((d) => d.payload.id));
        if (ds.some((d) => d.payload.id === 'bad')) throw new Error('one bad row');
        done.push(...ds.map((d) => d.payload.id));
      },
      handle: async (item) => {
        if (item.id === 'bad') throw new Error('bad');
        done.push(item.id);
      },
    });
    // Published before the start, so the first pull brings them together.
    for (const id of ['e1', 'e2', 'bad', 'e3']) await t.publish({ id, phone: '91234567' });
    await t.c.start();
    await until(() => done.length === 3);
    // Usually one batch of all four; the server may split its first push, so only what matters is checked.
    expect(batches.some((b) => b.length > 1 && b.includes('bad'))).toBe(true);
    expect(done).toEqual(['e1', 'e2', 'e3']);
    expect(t.logger.lines.some((l) => String(l.message).includes('batch failed'))).toBe(true);
  });

  it('with gatherMs, messages published a few ms apart after the start share one batch', async () => {
    const batches: string[][] = [];
    const t = consumer({
      batchMax: 10,
      gatherMs: 150,
      handleBatch: async (ds) => void batches.push(ds.map((d) => d.payload.id)),
      handle: async (item) => void batches.push([item.id]),
    });
    await t.c.start();
    await sleep(200);
    for (const id of ['g1', 'g2', 'g3']) {
      await t.publish({ id, phone: '91234567' });
      await sleep(10);
    }
    await until(() => batches.flat().length === 3);
    // Without gathering, each would be handled on its own as it came (one transaction each).
    expect(batches).toEqual([['g1', 'g2', 'g3']]);
  });

  it('an urgent message ends the gather it comes into; the next batch gathers again', async () => {
    const batches: Array<{ ids: string[]; at: number }> = [];
    const t = consumer({
      batchMax: 10,
      gatherMs: 3000,
      urgent: (item) => item.id.startsWith('now'),
      handleBatch: async (ds) => void batches.push({ ids: ds.map((d) => d.payload.id), at: Date.now() }),
      handle: async (item) => void batches.push({ ids: [item.id], at: Date.now() }),
    });
    await t.c.start();
    await sleep(200);
    const sent = Date.now();
    await t.publish({ id: 'r1', phone: '91234567' });
    await sleep(50);
    await t.publish({ id: 'now1', phone: '91234567' });
    await until(() => batches.length === 1);
    // Handled well before the 3 s gather would have ended, the report that waited with it.
    expect(batches[0]!.ids).toEqual(['r1', 'now1']);
    expect(batches[0]!.at - sent).toBeLessThan(1500);
    // A report alone after it waits for the whole gather again.
    const second = Date.now();
    await t.publish({ id: 'r2', phone: '91234567' });
    await until(() => batches.length === 2, 10_000);
    expect(batches[1]!.ids).toEqual(['r2']);
    expect(batches[1]!.at - second).toBeGreaterThanOrEqual(2500);
  });

  it('stops at once while gathering, and hands what it held back', async () => {
    const handled: string[] = [];
    const t = consumer({
      batchMax: 10,
      gatherMs: 5000,
      handleBatch: async (ds) => void handled.push(...ds.map((d) => d.payload.id)),
      handle: async (item) => void handled.push(item.id),
    });
    await t.c.start();
    await sleep(200);
    await t.publish({ id: 'held', phone: '91234567' });
    await until(async () => (await t.info()).num_ack_pending === 1);
    const stopping = Date.now();
    await t.c.stop();
    expect(Date.now() - stopping).toBeLessThan(2000);
    expect(handled).toEqual([]);
    // Handed back, not acked: the next start handles it.
    const again = consumer({
      durable: t.name,
      filterSubject: t.subject,
      handle: async (item) => void handled.push(item.id),
    });
    await again.c.start();
    await until(() => handled.length === 1);
    expect(handled).toEqual(['held']);
  });

  it('stops cleanly: nothing is handled after stop, and the next start picks up what came meanwhile', async () => {
    const seen: string[] = [];
    const handle = async (item: Item) => void seen.push(item.id);
    const t = consumer({ handle });
    await t.c.start();
    await t.publish({ id: 'f1', phone: '91234567' });
    await until(() => seen.length === 1);
    await t.c.stop();
    await t.publish({ id: 'f2', phone: '91234567' });
    await sleep(500);
    expect(seen).toEqual(['f1']);

    const again = new DurableConsumer<Item>(nc, { ...optionsOf(t), handle });
    consumers.push(again);
    await again.start();
    await until(() => seen.length === 2);
    expect(seen).toEqual(['f1', 'f2']);
  });

  it('waits for the handler in flight when stopped, and acks it', async () => {
    let release!: () => void;
    const started: string[] = [];
    const t = consumer({
      handle: async (item) => {
        started.push(item.id);
        await new Promise<void>((r) => (release = r));
      },
    });
    await t.c.start();
    await t.publish({ id: 'g', phone: '91234567' });
    await until(() => started.length === 1);
    let stopped = false;
    const stopping = t.c.stop().then(() => (stopped = true));
    await sleep(200);
    expect(stopped).toBe(false);
    release();
    await stopping;
    await until(async () => (await t.info()).num_ack_pending === 0);
  });

  it('keeps consuming after NATS is killed and started again', async () => {
    const seen: string[] = [];
    const t = consumer({ handle: async (item) => void seen.push(item.id) });
    await t.c.start();
    await t.publish({ id: 'h1', phone: '91234567' });
    await until(() => seen.length === 1);

    await nats.process.kill9();
    await sleep(300);
    nats = await startNats({ storeDir, port: nats.port });
    await until(async () => {
      try {
        await t.publish({ id: 'h2', phone: '91234567' });
        return true;
      } catch {
        return false;
      }
    }, 30_000);
    await until(() => seen.includes('h2'), 30_000);
    expect(seen[0]).toBe('h1');
  });

  /** The options a test consumer was built with (same durable and subject). */
  function optionsOf(t: { name: string; subject: string; logger: ConsumerLogger }): DurableConsumerOptions<Item> {
    return {
      stream: STREAM,
      durable: t.name,
      filterSubject: t.subject,
      ackWaitMs: 30_000,
      maxDeliver: 5,
      maxAckPending: 100,
      logger: t.logger,
      decode: (body) => body as Item,
      handle: async () => undefined,
    };
  }
});
