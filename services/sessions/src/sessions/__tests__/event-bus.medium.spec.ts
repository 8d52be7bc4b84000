import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, type EventEnvelope } from '@bns/contracts';
import { connectNats, ensureEventsStream, EventBus, RpcClient } from '@bns/service-kit';
import { startNats, waitFor, type Nats } from '@bns/testing';

const envelope = (eventId: string): EventEnvelope => ({ eventId, userId: 'user_bus', at: new Date().toISOString() });

/** The events stored on `subject`, in stream order: their ids and headers. */
async function stored(
  nc: NatsConnection,
  stream: string,
  subject: string,
): Promise<{ id: string; msgId: string | undefined }[]> {
  const jsm = await jetstreamManager(nc);
  const out: { id: string; msgId: string | undefined }[] = [];
  const last = (await jsm.streams.info(stream)).state.last_seq;
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
    if (m?.subject === subject)
      out.push({ id: m.json<EventEnvelope>().eventId, msgId: m.header.get('Nats-Msg-Id') || undefined });
  }
  return out;
}

describe('EventBus (real NATS): JetStream publishes on the shared inbox', () => {
  let nats: Nats;
  let natsPort: number;
  let natsStore: string;
  let nc: NatsConnection;

  beforeAll(async () => {
    natsStore = mkdtempSync(join(tmpdir(), 'bns-bus-'));
    nats = await startNats({ storeDir: natsStore });
    natsPort = Number(new URL(nats.url).port);
    nc = await connectNats(nats.url, 'event-bus-spec');
    await ensureEventsStream(nc);
  }, 60_000);

  afterAll(async () => {
    await nc?.drain().catch(() => undefined);
    await nats?.stop();
  });

  it('stores each event once, in the order published, with its id as the message id', async () => {
    const bus = new EventBus(nc);
    await Promise.all(['b-1', 'b-2', 'b-3'].map((id) => bus.publish('events.job.log', envelope(id))));
    await bus.publish('events.job.log', envelope('b-2')); // a republish (the sweeper's): stored once
    expect(await stored(nc, EVENTS_STREAM, 'events.job.log')).toEqual([
      { id: 'b-1', msgId: 'b-1' },
      { id: 'b-2', msgId: 'b-2' },
      { id: 'b-3', msgId: 'b-3' },
    ]);
  });

  it('rejects when JetStream refuses the event or nobody stores it', async () => {
    const jsm = await jetstreamManager(nc);
    // A stream that is full and refuses new messages answers the publish with an error ack.
    await jsm.streams.add({ name: 'BUS_FULL', subjects: ['bus.full'], max_msgs: 1, discard: DiscardPolicy.New });
    const bus = new EventBus(nc);
    await bus.publish('bus.full' as never, envelope('f-1'));
    await expect(bus.publish('bus.full' as never, envelope('f-2'))).rejects.toThrow(
      /JetStream did not store the event: maximum messages exceeded/,
    );
    // No stream captures the subject: no responders, an error (the outbox keeps the row for the sweeper).
    await expect(bus.publish('bus.nowhere' as never, envelope('n-1'))).rejects.toThrow();
    await jsm.streams.delete('BUS_FULL');
  });

  it('holds a publish made while NATS is down until it is back, then stores it once', async () => {
    const rpc = new RpcClient(nc, { shards: 1, timeoutMs: 5000 });
    const bus = new EventBus(nc, rpc);
    await nats.stop();
    await waitFor(async () => !rpc.connected, 10_000, 20, 'the connection to notice');
    const publishing = bus.publish('events.job.progress', envelope('h-1'));
    let settled = false;
    void publishing.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    nats = await startNats({ storeDir: natsStore, port: natsPort });
    await publishing;
    expect(await stored(nc, EVENTS_STREAM, 'events.job.progress')).toEqual([{ id: 'h-1', msgId: 'h-1' }]);
    await bus.publish('events.job.progress', envelope('h-2'));
    expect((await stored(nc, EVENTS_STREAM, 'events.job.progress')).map((e) => e.id)).toEqual(['h-1', 'h-2']);
  }, 60_000);

  it('fails at once on a closed connection (a stopping process), leaving the event to the outbox', async () => {
    const closing = await connectNats(nats.url, 'event-bus-spec-closing');
    const bus = new EventBus(closing);
    await closing.close();
    const started = Date.now();
    await expect(bus.publish('events.job.log', envelope('c-1'))).rejects.toThrow('the NATS connection is closed');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
