import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { EventKey, EventOf } from '@bns/contracts';
import { EventBus } from '@bns/service-kit';
import { inTransaction, sqlOf, type Sql } from '../database/sql.js';
import type { OutboxRow } from './job-journal.js';

/** Rows older than this are the sweeper's: their writer died or could not publish. */
const ORPHAN_AFTER_MS = 5000;
const SWEEP_EVERY_MS = 5000;
const SWEEP_BATCH = 500;

/**
 * Publishes committed outbox rows to JetStream in the order they were written, then deletes them.
 * Each event's id is its JetStream message id, so a row published twice (a crash between publish and
 * delete, or the sweeper meeting a slow writer) is stored once.
 */
@Injectable()
export class OutboxPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OutboxPublisher');
  private readonly sql: Sql;
  private queue: OutboxRow[] = [];
  private pumping?: Promise<void>;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly db: DataSource,
    private readonly events: EventBus,
  ) {
    this.sql = sqlOf(db);
  }

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.drain();
  }

  /** Queues rows of a committed transaction; returns at once (publishing never slows the sender). */
  publish(rows: OutboxRow[]): void {
    if (rows.length === 0) return;
    this.queue.push(...rows);
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const done = await this.send(batch);
      if (done.length > 0) {
        await this.sql(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [done]).catch((err: unknown) =>
          this.logger.warn({ err }, 'could not delete published outbox rows; the sweeper republishes them (deduplicated)'),
        );
      }
    }
  }

  /** Starts every publish before awaiting any, so they leave on the connection in order. */
  private async send(rows: OutboxRow[]): Promise<string[]> {
    const results = await Promise.allSettled(rows.map((r) => this.events.emit(r.subject, r.payload as EventOf<EventKey>)));
    const done: string[] = [];
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') done.push(rows[i]!.id);
      else this.logger.warn({ err: r.reason, subject: rows[i]!.subject }, 'event not published yet; the sweeper retries it');
    });
    return done;
  }

  /** Publishes what crashed writers left behind; rows stay locked while this replica handles them. */
  private async sweep(): Promise<void> {
    try {
      await inTransaction(this.db, async (sql) => {
        const rows = await sql<{ id: string; subject: EventKey; payload: EventOf<EventKey> }>(
          `SELECT id::text, subject, payload FROM outbox
            WHERE created_at < now() - make_interval(secs => $1)
            ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [ORPHAN_AFTER_MS / 1000, SWEEP_BATCH],
        );
        if (rows.length === 0) return;
        const done = await this.send(rows);
        await sql(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [done]);
        this.logger.log({ published: done.length }, 'republished events left in the outbox');
      });
    } catch (err) {
      this.logger.warn({ err }, 'outbox sweep failed; next sweep retries');
    }
  }
}
