import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { connectNats } from '@bns/service-kit';
import { startNats, type Nats } from '@bns/testing';
import { STAGED_CHUNK_BYTES, StagedBodies } from '../staged-bodies.js';

/** Staged request bodies on a real nats-server: big chunks, the bytes back as they went, a lost bucket made again. */
describe('StagedBodies (real NATS)', () => {
  let nats: Nats;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startNats();
    nc = await connectNats(nats.url, 'gateway-staged-medium');
  }, 30_000);
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('stores a body in chunks of STAGED_CHUNK_BYTES and reads back the same text', async () => {
    const staged = new StagedBodies(nc, 'staged-test', 60_000);
    // Multi-byte characters on the chunk boundaries: chunks are bytes, the text comes back whole.
    const text = JSON.stringify({ rows: Array.from({ length: 40_000 }, (_, i) => ({ i, name: `Çé 👋 ${i}` })) });
    const bytes = Buffer.byteLength(text);
    expect(bytes).toBeGreaterThan(2 * STAGED_CHUNK_BYTES);
    const ref = await staged.put(text);
    expect(ref.bucket).toBe('staged-test');
    const store = await new Objm(nc).open('staged-test');
    const info = await store.info(ref.name);
    expect(info?.chunks).toBe(Math.ceil(bytes / STAGED_CHUNK_BYTES));
    expect(Buffer.from((await store.getBlob(ref.name))!).toString('utf8')).toBe(text);
    // Each put has a name of its own.
    expect((await staged.put('{}')).name).not.toBe(ref.name);
  });

  it('makes the bucket again when it was lost, and the put still succeeds', async () => {
    const staged = new StagedBodies(nc, 'staged-lost', 60_000);
    await staged.put('{"first":true}');
    await new Objm(nc).open('staged-lost').then((s) => s.destroy());
    const ref = await staged.put('{"second":true}');
    const store = await new Objm(nc).open('staged-lost');
    expect(Buffer.from((await store.getBlob(ref.name))!).toString('utf8')).toBe('{"second":true}');
  });
});
