import type { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import type { RpcClient } from '../nats/rpc-client.js';

/**
 * Reads every stored retention setting from the integrations service (their one home), a page at a
 * time, handing each page to `save` (the owner's own copy) before asking for the next. An owner calls
 * it before each purge and purges nothing when it fails: a user's "keep" must never be read as the default.
 */
export async function syncRetentionSettings(
  rpc: RpcClient,
  save: (settings: RetentionPage['settings']) => Promise<void>,
): Promise<void> {
  let after: string | undefined;
  do {
    const page = await rpc.call('integrations.account.retention.page', {
      ...(after === undefined ? {} : { after }),
      limit: ACCOUNT_LIMITS.retentionPageMax,
    });
    await save(page.settings);
    after = page.next ?? undefined;
  } while (after !== undefined);
}

/**
 * SQL of the instant before which a row of user `r` (its `retention_settings` row, LEFT JOINed as `r`)
 * is past its period, at `$1` (now): the default `$2` days without a setting, NULL (never) with "keep".
 */
export const RETENTION_CUTOFF_SQL = `$1::timestamptz - make_interval(days => CASE WHEN r.user_id IS NULL THEN $2::int ELSE r.days END)`;

/** A page of settings into the owner's own `retention_settings` table (its schema's search path). */
export async function saveRetentionSettings(em: EntityManager, settings: RetentionPage['settings']): Promise<void> {
  if (settings.length === 0) return;
  await em.query(
    `INSERT INTO retention_settings (user_id, days)
     SELECT * FROM unnest($1::text[], $2::int[])
     ON CONFLICT (user_id) DO UPDATE SET days = EXCLUDED.days`,
    [settings.map((s) => s.userId), settings.map((s) => s.days)],
  );
}

/** The retention purge's clock: tests give their own to move time on. */
export const RETENTION_CLOCK = Symbol('RETENTION_CLOCK');
export interface RetentionClock {
  now(): Date;
}
export const systemClock: RetentionClock = { now: () => new Date() };

export interface RetentionPurgeOptions {
  /** How often it runs (RETENTION_PURGE_EVERY_MS); 0 never on its own (tests call `run`). */
  everyMs: number;
  rpc: RpcClient;
  clock: RetentionClock;
  /** Stores a page of settings in the owner's copy (`saveRetentionSettings` with its manager). */
  save: (settings: RetentionPage['settings']) => Promise<void>;
  logger: Logger;
  /** The log line when something was removed ("inbox messages past their retention removed"). */
  removed: string;
}

/**
 * The loop every owner's retention purge shares: on its interval it reads the settings (nothing is
 * purged when they cannot be read: a user's "keep" must never be read as the default), then runs the
 * owner's `purge` at the clock's now; one run at a time; a failure waits for the next interval.
 */
export abstract class RetentionPurgeLoop<R extends Record<string, number>>
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private timer?: NodeJS.Timeout;
  private running = false;

  protected constructor(private readonly loop: RetentionPurgeOptions) {}

  /** Removes what is past each user's period at `now`; what it removed, by kind. */
  protected abstract purge(now: Date): Promise<R>;

  onApplicationBootstrap(): void {
    if (this.loop.everyMs === 0) return;
    this.timer = setInterval(() => void this.runQuietly(), this.loop.everyMs);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async run(): Promise<R> {
    await syncRetentionSettings(this.loop.rpc, this.loop.save);
    return this.purge(this.loop.clock.now());
  }

  private async runQuietly(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const done = await this.run();
      if (Object.values(done).some((n) => n > 0)) this.loop.logger.log(done, this.loop.removed);
    } catch (err) {
      this.loop.logger.warn({ err: (err as Error).name }, 'retention purge failed; it runs again at the next interval');
    } finally {
      this.running = false;
    }
  }
}
