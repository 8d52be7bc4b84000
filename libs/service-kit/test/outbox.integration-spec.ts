import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import type { EventKey } from '@bns/contracts';
import { startNats, startPostgres, waitFor, type Nats, type Postgres } from '@bns/testing';
import { createDataSource, migrateWithLock } from '../src/database/database.js';
import { Transactions } from '../src/database/transaction.js';
import { connectNats } from '../src/nats/connection.js';
import { ensureEventsStream, EventBus } from '../src/nats/event-bus.js';
import {
  OutboxEntity,
  OutboxPublisher,
  OutboxRepository,
  outboxTableSql,
  type OutboxEvent,
} from '../src/outbox/outbox.js';

class CreateOutbox1700000000000 implements MigrationInterface {
  name = 'CreateOutbox1700000000000';
  async up(q: QueryRunner) {
    await q.query(outboxTableSql('kit_outbox'));
  }
  async down(q: QueryRunner) {
    await q.query('DROP TABLE kit_outbox.outbox');
  }
}

/**
 * The outbox with bundles: a transaction's events share one row, published event by event
 * (a batched transaction's units each publish their own), and the row goes only once all of them went.
 */
describe('outbox bundles against a real Postgres and NATS', () => {
  let pg: Postgres;
  let nats: Nats;
  let db: DataSource;
  let nc: NatsConnection;
  let sub: Subscription;
  let tx: Transactions;
  let outbox: OutboxRepository;
  let publisher: OutboxPublisher;
  const heard: string[] = [];

  beforeAll(async () => {
    [pg, nats] = await Promise.all([startPostgres(), startNats()]);
    db = createDataSource({
      url: pg.url,
      schema: 'kit_outbox',
      entities: [OutboxEntity],
      migrations: [CreateOutbox1700000000000],
      poolSize: 3,
    });
    await db.initialize();
    await migrateWithLock(db, 'kit_outbox');
    nc = await connectNats(nats.url, 'outbox-test');
    await ensureEventsStream(nc);
    sub = nc.subscribe('events.>', {
      callback: (err, msg) => {
        if (!err) heard.push((msg.json() as { eventId: string }).eventId);
      },
    });
    tx = new Transactions(db);
    outbox = new OutboxRepository(tx);
    publisher = new OutboxPublisher(tx, outbox, new EventBus(nc));
  }, 60_000);

  afterAll(async () => {
    sub?.unsubscribe();
    await nc?.close();
    await db?.destroy();
    await Promise.all([pg?.stop(), nats?.stop()]);
  });

  const event = (subject: string, eventId: string): OutboxEvent => ({
    subject: subject as EventKey,
    payload: { eventId, userId: 'user_outbox' } as never,
  });
  const rowCount = async () => Number((await db.query('SELECT count(*) AS n FROM kit_outbox.outbox'))[0].n);

  it('deletes a bundle only once every event in it was published, however many publish calls that took', async () => {
    const rows = await tx.run((em) =>
      outbox.add(em, [
        event('events.job.log', 'b-1'),
        event('events.job.progress', 'b-2'),
        event('events.job.log', 'b-3'),
      ]),
    );
    expect(new Set(rows.map((r) => r.id)).size).toBe(1);
    expect(await rowCount()).toBe(1);
    expect(await outbox.count()).toBe(3);

    publisher.publish([rows[0]!]);
    publisher.publish([rows[1]!]);
    await publisher.drain();
    await waitFor(() => heard.includes('b-2'), 10_000, 20, 'the first two events');
    // One event is still to come: the row stays.
    expect(await rowCount()).toBe(1);

    publisher.publish([rows[2]!]);
    await publisher.drain();
    await waitFor(() => heard.includes('b-3'), 10_000, 20, 'the last event');
    expect(await rowCount()).toBe(0);
    expect(heard.filter((id) => id.startsWith('b-'))).toEqual(['b-1', 'b-2', 'b-3']);
  });

  it('keeps a bundle one of whose events could not be published, and its sweep publishes the rest again without deleting it', async () => {
    // No stream holds this subject: JetStream does not store it, the publish fails.
    const rows = await tx.run((em) => outbox.add(em, [event('events.job.log', 'f-1'), event('kit.nowhere', 'f-2')]));
    publisher.publish(rows);
    await publisher.drain();
    expect(await rowCount()).toBe(1);
    expect(heard).toContain('f-1');

    expect(await publisher.sweep(0)).toBe(1);
    expect(await rowCount()).toBe(1);
    await db.query('DELETE FROM kit_outbox.outbox');
  });

  it('a sweep goes on batch after batch until the backlog is gone (100 rows each)', async () => {
    // 250 rows, written while nothing published them (as during an outage), all old enough for the sweeper.
    for (let i = 0; i < 250; i++) await tx.run((em) => outbox.add(em, [event('events.job.log', `o-${i}`)]));
    expect(await publisher.sweep(0)).toBe(250);
    expect(await rowCount()).toBe(0);
    await waitFor(() => heard.includes('o-249'), 10_000, 20, 'the last swept event');
  });

  it('a lone event is a row of its own, deleted once published', async () => {
    const rows = await tx.run((em) => outbox.add(em, [event('events.job.log', 's-1')]));
    expect(rows[0]!.of).toBeUndefined();
    publisher.publish(rows);
    await publisher.drain();
    expect(await rowCount()).toBe(0);
  });
});
