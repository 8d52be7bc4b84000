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
  /** The outbox row it is stored in: several events of one transaction share a row (see `OutboxRepository.add`). */
  id: string;
  /** How many events that row holds (absent: 1); the row is deleted once all of them were published. */
  of?: number;
}

/**
 * The `subject` of a row holding several events: its `payload` is their array, `[{ subject, payload }, …]`.
 * Not a NATS subject, so no event is ever mistaken for one.
 */
export const OUTBOX_BUNDLE = '*';

/** SQL: how many events the outbox rows hold (a bundle counts its events), for counts and metrics. */
export const OUTBOX_EVENTS_SQL = `coalesce(sum(CASE WHEN subject = '${OUTBOX_BUNDLE}' THEN jsonb_array_length(payload) ELSE 1 END), 0)::int`;

/** The events a stored row holds, each with the row's id. */
function eventsOf(row: { id: string; subject: string; payload: unknown }): OutboxRow[] {
  if (row.subject !== OUTBOX_BUNDLE) return [row as OutboxRow];
  const events = row.payload as OutboxEvent[];
  return events.map((e) => ({ id: row.id, subject: e.subject, payload: e.payload, of: events.length }));
}

/** Published rows no write came to delete within this long are deleted on their own. */
export const OUTBOX_DELETE_IDLE_MS = 100;

/**
 * Every query of the outbox table. Published rows are not deleted one statement per publish: the
 * next `add` deletes them in its own statement (no round trip or commit of their own), and
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

  /**
   * Writes events on `em`'s transaction, and deletes the rows published since the last write; the
   * events to hand to the publisher once it committed. Several events go in one row (a bundle, its
   * payload their array): a transaction's events cost one row, one index entry and one delete, not
   * one each, and a big bundle is stored compressed (a batched lane step writes hundreds).
   */
  async add(em: EntityManager, events: OutboxEvent[]): Promise<OutboxRow[]> {
    if (events.length === 0) return [];
    const gone = this.published.splice(0);
    const [subject, payload] = events.length === 1 ? [events[0]!.subject, events[0]!.payload] : [OUTBOX_BUNDLE, events];
    // Rows the sweeper holds (it republishes and deletes them itself) are skipped, not waited for.
    const made = await rows<{ id: string }>(
      em,
      `WITH gone AS (
         DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE id = ANY($3::bigint[]) FOR UPDATE SKIP LOCKED)
       )
       INSERT INTO outbox (subject, payload) VALUES ($1, $2::jsonb) RETURNING id::text AS id`,
      [subject, JSON.stringify(payload), gone],
    ).catch((err: unknown) => {
      // Not deleted: left for the next write.
      this.published.unshift(...gone);
      throw err;
    });
    const id = made[0]!.id;
    return events.map((e) => ({
      id,
      subject: e.subject,
      payload: e.payload,
      ...(events.length > 1 ? { of: events.length } : {}),
    }));
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
      this.logger.warn(
        { err: errorKind(err) },
        'could not delete published outbox rows; the sweeper republishes them (deduplicated)',
      ),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.deletePublished();
  }

  /** One array parameter, however many rows. */
  async delete(ids: string[], em: EntityManager = this.tx.manager): Promise<void> {
    if (ids.length > 0) await rows(em, `DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** The events of up to `limit` rows older than `olderThanMs`, locked for this transaction (other replicas skip them). */
  async orphans(em: EntityManager, olderThanMs: number, limit: number): Promise<OutboxRow[]> {
    const found = await rows<{ id: string; subject: string; payload: unknown }>(
      em,
      `SELECT id::text AS id, subject, payload FROM outbox
        WHERE created_at < now() - make_interval(secs => $1)
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [olderThanMs / 1000, limit],
    );
    return found.flatMap(eventsOf);
  }

  /** Events waiting in the outbox (a bundle counts its events). */
  async count(): Promise<number> {
    return (await rows<{ n: number }>(this.tx.manager, `SELECT ${OUTBOX_EVENTS_SQL} AS n FROM outbox`))[0]!.n;
  }
}

/** Rows older than this are the sweeper's: their writer died or could not publish. */
const ORPHAN_AFTER_MS = 5000;
const SWEEP_EVERY_MS = 5000;
/** Rows per sweep transaction: a row may be a bundle of a batched transaction's events (hundreds). */
const SWEEP_BATCH = 100;
/** A bundle whose events were not all handed to the publisher within this long is left to the sweeper. */
const BUNDLE_MEMORY_MS = 60_000;

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
  /**
   * Bundles some of whose events were published (a batched transaction's units publish their own
   * events, each when its unit settles): how many are left, and whether one failed (then the row
   * stays, for the sweeper).
   */
  private readonly bundles = new Map<string, { left: number; failed: boolean; since: number }>();
  private sweeping?: Promise<number>;

  constructor(
    private readonly tx: Transactions,
    private readonly outbox: OutboxRepository,
    private readonly events: EventBus,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => {
      const forget = Date.now() - BUNDLE_MEMORY_MS;
      for (const [id, b] of this.bundles) if (b.since < forget) this.bundles.delete(id);
      // One sweep at a time: a long one (an outage's backlog) is not joined by the next tick's.
      if (this.sweeping) return;
      this.sweeping = this.sweep().finally(() => (this.sweeping = undefined));
    }, SWEEP_EVERY_MS);
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
    // Batch after batch while full ones come back and every event of them went (an outage's backlog
    // drains in one sweep); a batch with a failure leaves the rest to the next sweep.
    let total = 0;
    for (;;) {
      const round = await this.sweepOnce(olderThanMs);
      total += round.published;
      if (round.rows < SWEEP_BATCH || round.failed > 0) return total;
    }
  }

  /** One batch of orphan rows: published, and deleted where all their events went. */
  private async sweepOnce(olderThanMs: number): Promise<{ rows: number; published: number; failed: number }> {
    try {
      return await this.tx.run(async (em) => {
        const orphans = await this.outbox.orphans(em, olderThanMs, SWEEP_BATCH);
        if (orphans.length === 0) return { rows: 0, published: 0, failed: 0 };
        // Every event of each row is here: a row whose events all went is done.
        const results = await this.publishAll(orphans);
        const failedRows = new Set(orphans.filter((_, i) => !results[i]).map((r) => r.id));
        const rowIds = [...new Set(orphans.map((r) => r.id))];
        await this.outbox.delete(
          rowIds.filter((id) => !failedRows.has(id)),
          em,
        );
        const published = results.filter(Boolean).length;
        this.logger.log({ published, left: orphans.length - published }, 'republished events left in the outbox');
        return { rows: rowIds.length, published, failed: orphans.length - published };
      });
    } catch (err) {
      this.logger.warn({ err: errorKind(err) }, 'outbox sweep failed; the next sweep retries');
      return { rows: 0, published: 0, failed: 1 };
    }
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.outbox.deleteSoon(await this.send(batch));
    }
  }

  /** Publishes a committed transaction's events; the rows all of whose events are now published. */
  private async send(batch: OutboxRow[]): Promise<string[]> {
    const results = await this.publishAll(batch);
    const done: string[] = [];
    batch.forEach((row, i) => {
      const ok = results[i]!;
      if ((row.of ?? 1) === 1) {
        if (ok) done.push(row.id);
        return;
      }
      const bundle = this.bundles.get(row.id) ?? { left: row.of!, failed: false, since: Date.now() };
      bundle.left -= 1;
      bundle.failed ||= !ok;
      if (bundle.left > 0) this.bundles.set(row.id, bundle);
      else {
        this.bundles.delete(row.id);
        if (!bundle.failed) done.push(row.id);
      }
    });
    return done;
  }

  /** Starts every publish before awaiting any, so they leave on the connection in order; whether each went. */
  private async publishAll(batch: OutboxRow[]): Promise<boolean[]> {
    const results = await Promise.allSettled(batch.map((r) => this.events.emit(r.subject, r.payload)));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0)
      this.logger.warn(
        { failed: failed.length, err: errorKind(failed[0]!.reason) },
        'events not published yet; the sweeper retries them',
      );
    return results.map((r) => r.status === 'fulfilled');
  }
}

/** SQL errors carry their parameters (message text, numbers): only the kind and code are logged. */
function errorKind(err: unknown): { name: string; code?: string } {
  return { name: err instanceof Error ? err.name : typeof err, code: (err as { code?: string })?.code };
}
