import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import { batchDeleteSql, rows, saveRetentionSettings, Transactions } from '@bns/service-kit';

/** A job's rows the purge removes: skips, log lines, then the recipients with their variables, receipts and replies. */
const DETAIL_TABLES = ['job_skips', 'job_logs', 'job_recipients'];
const FINISHED = ['completed', 'failed', 'cancelled'];

/** Every statement of the retention purge. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly tx: Transactions) {}

  /** Stores the settings of one page (an absent user keeps the default). */
  saveSettings(settings: RetentionPage['settings']): Promise<void> {
    return saveRetentionSettings(this.tx.manager, settings);
  }

  /**
   * Finished jobs whose details are past their owner's period at `now` (the default for a user
   * without a setting; none for "until I delete them"), oldest first, with the period.
   */
  due(now: Date, limit: number): Promise<Array<{ id: string; days: number }>> {
    return rows(
      this.tx.manager,
      `SELECT j.id::text AS id, p.days FROM jobs j
         LEFT JOIN retention_settings r ON r.user_id = j.user_id
         CROSS JOIN LATERAL (SELECT CASE WHEN r.user_id IS NULL THEN $2::int ELSE r.days END AS days) p
        WHERE j.finished_at IS NOT NULL AND j.details_purged_after_days IS NULL AND j.status = ANY($4::text[])
          AND p.days IS NOT NULL AND j.finished_at < $1::timestamptz - make_interval(days => p.days)
        ORDER BY j.finished_at LIMIT $3`,
      [now, ACCOUNT_LIMITS.retentionDefaultDays, limit, FINISHED],
    );
  }

  /** One batch of one of the job's detail tables; how many rows went (0: that table is done). */
  async deleteDetailBatch(table: string, jobId: string): Promise<number> {
    return (
      await rows<{ n: number }>(this.tx.manager, batchDeleteSql(`"${table}"`, 'job_id = $1::uuid', '$2'), [
        jobId,
        ACCOUNT_LIMITS.deleteBatchRows,
      ])
    )[0]!.n;
  }

  /** The job keeps its counts; its text goes and it says after how long. */
  async markPurged(jobId: string, days: number): Promise<void> {
    await rows(this.tx.manager, `UPDATE jobs SET message = '', details_purged_after_days = $2 WHERE id = $1`, [
      jobId,
      days,
    ]);
  }

  readonly detailTables = DETAIL_TABLES;
}
