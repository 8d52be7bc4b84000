import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  deleteInBatches,
  RETENTION_CLOCK,
  RetentionPurgeLoop,
  RpcClient,
  SERVICE_ENV,
  type RetentionClock,
} from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
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
export class RetentionPurge extends RetentionPurgeLoop<{ jobs: number; rows: number }> {
  constructor(
    private readonly repo: RetentionRepository,
    rpc: RpcClient,
    @Inject(RETENTION_CLOCK) clock: RetentionClock,
    @Inject(SERVICE_ENV) env: Pick<JobsEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {
    super({
      everyMs: env.RETENTION_PURGE_EVERY_MS,
      rpc,
      clock,
      save: (settings) => repo.saveSettings(settings),
      logger: new Logger('RetentionPurge'),
      removed: 'campaign details past their retention removed',
    });
  }

  /** Every job past its period, a batch of rows at a time; the jobs and rows removed. */
  protected async purge(now: Date): Promise<{ jobs: number; rows: number }> {
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
}
