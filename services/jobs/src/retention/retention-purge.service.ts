import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { deleteInBatches, RpcClient, SERVICE_ENV, syncRetentionSettings } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { RETENTION_CLOCK, type RetentionClock } from './retention-clock.js';
import { RetentionRepository } from './retention.repository.js';

/** Jobs taken per look for due ones (each is then purged a batch of rows at a time). */
const JOBS_PER_LOOK = 100;

/**
 * Applies each user's retention setting (stored in integrations, read a page at a time before each
 * run) to the campaigns: once a finished job is older than the period, its message text, variables,
 * per-recipient rows and receipts, skips and log go, ACCOUNT_LIMITS.deleteBatchRows rows per
 * statement so no lock is held long; the job keeps its counts (the usage figures) and says after how
 * many days its details were removed. Opt-outs are not touched.
 */
@Injectable()
export class RetentionPurge implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RetentionPurge');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly repo: RetentionRepository,
    private readonly rpc: RpcClient,
    @Inject(RETENTION_CLOCK) private readonly clock: RetentionClock,
    @Inject(SERVICE_ENV) private readonly env: Pick<JobsEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.RETENTION_PURGE_EVERY_MS === 0) return;
    this.timer = setInterval(() => void this.runQuietly(), this.env.RETENTION_PURGE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Reads the settings, then purges every job past its period; the rows removed. */
  async run(): Promise<{ jobs: number; rows: number }> {
    await syncRetentionSettings(this.rpc, (settings) => this.repo.saveSettings(settings));
    const now = this.clock.now();
    let jobs = 0;
    let removed = 0;
    for (;;) {
      const due = await this.repo.due(now, JOBS_PER_LOOK);
      for (const job of due) {
        for (const table of this.repo.detailTables)
          removed += await deleteInBatches(() => this.repo.deleteDetailBatch(table, job.id));
        await this.repo.markPurged(job.id, job.days);
        jobs += 1;
      }
      if (due.length < JOBS_PER_LOOK) return { jobs, rows: removed };
    }
  }

  private async runQuietly(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const done = await this.run();
      if (done.jobs > 0) this.logger.log(done, 'campaign details past their retention removed');
    } catch (err) {
      // Without the settings nothing is purged: a user's "keep" must never be read as the default.
      this.logger.warn({ err: (err as Error).name }, 'retention purge failed; it runs again at the next interval');
    } finally {
      this.running = false;
    }
  }
}
