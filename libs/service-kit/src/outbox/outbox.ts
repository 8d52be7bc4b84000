import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, type EntityManager } from 'typeorm';
import type { EventKey, EventOf } from '@bns/contracts';
import { rows, Transactions } from '../database/transaction.js';
import { EventBus } from '../nats/event-bus.js';

/**
 * The transactional outbox every service that emits events keeps in its own schema (DESIGN §1): an
 * event is written in the same transaction as the state change it reports, and published to JetStream
 * after commit; what a crash or an outage left behind is published by the sweeper. Each event's id is
 * its JetStream message id, so a row published twice is stored once (within the stream's duplicate
 * window; consumers dedupe on the id beyond it).
 */

/** `CREATE TABLE` of a schema's outbox, for that service's migration. */
export function outboxTableSql(schema: string): string {
  return `CREATE TABLE ${schema}.outbox (
    id bigserial PRIMARY KEY,
    subject text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`;
}

/** A schema's `outbox` table; register it in the service's data source. */
@Entity({ name: 'outbox' })
export class OutboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text' })
  subject!: EventKey;

  @Column({ type: 'jsonb' })
  payload!: EventOf<EventKey>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

export interface OutboxEvent<K extends EventKey = EventKey> {
  subject: K;
  payload: EventOf<K>;
}

export interface OutboxRow extends OutboxEvent {
  id: string;
}

/** Published rows no write came to delete within this long are deleted on their own. */
export const OUTBOX_DELETE_IDLE_MS = 100;

/**
 * Every query of the outbox table. Published rows are not deleted one statement per publish: the
 * next `add` deletes them in its own statement (no round trip or commit of their own, issue 17), and
 * when no write comes within OUTBOX_DELETE_IDLE_MS a statement of their own does. A write that rolls
 * back leaves its share of them in the table: the sweeper publishes them again, stored once by
 * JetStream (the event id is the message id) and skipped by consumers after that.
 */
@Injectable()
export class OutboxRepository implements BeforeApplicationShutdown {
  private readonly logger = new Logger('OutboxRepository');
  /** Ids of published rows still in the table. */
  private published: string[] = [];
  private idle?: NodeJS.Timeout;

  constructor(private readonly tx: Transactions) {}

  /** Writes events on `em`'s transaction, and deletes the rows published since the last write; the rows to hand to the publisher once it committed. */
  async add(em: EntityManager, events: OutboxEvent[]): Promise<OutboxRow[]> {
    if (events.length === 0) return [];
    const gone = this.published.splice(0);
    // Rows the sweeper holds (it republishes and deletes them itself) are skipped, not waited for.
    const ids = await rows<{ id: string }>(
      em,
      `WITH gone AS (
         DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE id = ANY($3::bigint[]) FOR UPDATE SKIP LOCKED)
       )
       INSERT INTO outbox (subject, payload) SELECT * FROM unnest($1::text[], $2::jsonb[]) RETURNING id::text AS id`,
      [events.map((e) => e.subject), events.map((e) => JSON.stringify(e.payload)), gone],
    ).catch((err: unknown) => {
      // Not deleted: left for the next write.
      this.published.unshift(...gone);
      throw err;
    });
    return ids.map((r, i) => ({ id: r.id, subject: events[i]!.subject, payload: events[i]!.payload }));
  }

  /** Rows that were published: the next `add` deletes them, or a statement of their own soon after. */
  deleteSoon(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.published.push(...ids);
    this.idle ??= setTimeout(() => {
      this.idle = undefined;
      void this.deletePublished();
    }, OUTBOX_DELETE_IDLE_MS);
    this.idle.unref?.();
  }

  /** Deletes the published rows no write took along (the idle timer, a drain, a clean stop). */
  async deletePublished(): Promise<void> {
    clearTimeout(this.idle);
    this.idle = undefined;
    const gone = this.published.splice(0);
    if (gone.length === 0) return;
    await this.delete(gone).catch((err: unknown) =>
      this.logger.warn({ err: errorKind(err) }, 'could not delete published outbox rows; the sweeper republishes them (deduplicated)'),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.deletePublished();
  }

  /** One array parameter, however many rows. */
  async delete(ids: string[], em: EntityManager = this.tx.manager): Promise<void> {
    if (ids.length > 0) await rows(em, `DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** Rows older than `olderThanMs`, locked for this transaction (other replicas skip them). */
  orphans(em: EntityManager, olderThanMs: number, limit: number): Promise<OutboxRow[]> {
    return rows<OutboxRow>(
      em,
      `SELECT id::text AS id, subject, payload FROM outbox
        WHERE created_at < now() - make_interval(secs => $1)
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [olderThanMs / 1000, limit],
    );
  }

  count(): Promise<number> {
    return this.tx.manager.getRepository(OutboxEntity).count();
  }
}

/** Rows older than this are the sweeper's: their writer died or could not publish. */
const ORPHAN_AFTER_MS = 5000;
const SWEEP_EVERY_MS = 5000;
const SWEEP_BATCH = 500;

/**
 * Publishes committed outbox rows to JetStream in the order they were written, then has them deleted
 * (`OutboxRepository.deleteSoon`). A row whose publish fails (NATS down) stays, and the sweeper
 * publishes it once NATS is back; a row whose delete fails (Postgres down) is published again later
 * and deduplicated by its event id.
 */
@Injectable()
export class OutboxPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OutboxPublisher');
  private queue: OutboxRow[] = [];
  private pumping?: Promise<void>;
  private sweeper?: NodeJS.Timeout;
  private readonly observers: ((rows: readonly OutboxRow[]) => void)[] = [];

  constructor(
    private readonly tx: Transactions,
    private readonly outbox: OutboxRepository,
    private readonly events: EventBus,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.drain();
  }

  /** Queues rows of a committed transaction; returns at once (publishing never slows the writer). */
  publish(rows: OutboxRow[]): void {
    if (rows.length === 0) return;
    for (const observe of this.observers) observe(rows);
    this.queue.push(...rows);
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  /** Calls `observer` with the rows of every committed transaction (a service's metrics). */
  observe(observer: (rows: readonly OutboxRow[]) => void): void {
    this.observers.push(observer);
  }

  /** Waits until everything queued is published and the published rows are deleted. */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
    await this.outbox.deletePublished();
  }

  /** Publishes what is left in the outbox now (tests, and a clean stop); the sweeper does it on its own. */
  async sweep(olderThanMs = ORPHAN_AFTER_MS): Promise<number> {
    try {
      return await this.tx.run(async (em) => {
        const orphans = await this.outbox.orphans(em, olderThanMs, SWEEP_BATCH);
        if (orphans.length === 0) return 0;
        const done = await this.send(orphans);
        await this.outbox.delete(done, em);
        this.logger.log({ published: done.length, left: orphans.length - done.length }, 'republished events left in the outbox');
        return done.length;
      });
    } catch (err) {
      this.logger.warn({ err: errorKind(err) }, 'outbox sweep failed; the next sweep retries');
      return 0;
    }
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.outbox.deleteSoon(await this.send(batch));
    }
  }

  /** Starts every publish before awaiting any, so they leave on the connection in order. */
  private async send(batch: OutboxRow[]): Promise<string[]> {
    const results = await Promise.allSettled(batch.map((r) => this.events.emit(r.subject, r.payload)));
    const done: string[] = [];
    let failed = 0;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') done.push(batch[i]!.id);
      else failed += 1;
    });
    if (failed > 0) this.logger.warn({ failed, err: errorKind((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason) }, 'events not published yet; the sweeper retries them');
    return done;
  }
}

/** SQL errors carry their parameters (message text, numbers): only the kind and code are logged. */
function errorKind(err: unknown): { name: string; code?: string } {
  return { name: err instanceof Error ? err.name : typeof err, code: (err as { code?: string })?.code };
}
