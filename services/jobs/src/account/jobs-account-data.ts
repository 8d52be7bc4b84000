import { Injectable, Logger } from '@nestjs/common';
import { ACCOUNT_LIMITS, JobsErrorCode } from '@bns/contracts';
import {
  AppError,
  batchDeleteSql,
  deleteInBatches,
  deleteUserRows,
  rows,
  Transactions,
  type AccountData,
} from '@bns/service-kit';
import { JobsService } from '../jobs/jobs.service.js';

const ACTIVE = ['queued', 'scheduled', 'running', 'paused'];

/**
 * Everything the jobs service holds for a user: its campaigns (cancelled first, so nothing more is
 * sent), their recipients, variables, receipts, skips and logs (by job id, a batch at a time), then
 * every table with a user_id (jobs, lane, policy, opt-outs, not-on-WhatsApp memory, start keys).
 */
@Injectable()
export class JobsAccountData implements AccountData {
  private readonly logger = new Logger('JobsAccountData');

  constructor(
    private readonly tx: Transactions,
    private readonly jobs: JobsService,
  ) {}

  async deleteUser(userId: string): Promise<number> {
    const em = this.tx.manager;
    const active = await rows<{ id: string }>(
      em,
      `SELECT id::text AS id FROM jobs WHERE user_id = $1 AND status = ANY($2::text[])`,
      [userId, ACTIVE],
    );
    for (const { id } of active) {
      try {
        await this.jobs.cancel({ userId, jobId: id });
      } catch (err) {
        // Finished meanwhile: nothing left to stop.
        if (!(err instanceof AppError && err.code === JobsErrorCode.AlreadyFinished)) throw err;
      }
    }
    if (active.length > 0) this.logger.log({ cancelled: active.length }, 'campaigns cancelled before deletion');
    const children = (
      await rows<{ table: string }>(
        em,
        `SELECT c.table_name AS table FROM information_schema.columns c
           JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
          WHERE c.table_schema = current_schema() AND c.column_name = 'job_id' AND t.table_type = 'BASE TABLE'
            AND NOT EXISTS (SELECT 1 FROM information_schema.columns u
                             WHERE u.table_schema = c.table_schema AND u.table_name = c.table_name AND u.column_name = 'user_id')
          ORDER BY c.table_name`,
      )
    ).map((r) => r.table);
    const jobIds = (await rows<{ id: string }>(em, `SELECT id::text AS id FROM jobs WHERE user_id = $1`, [userId])).map(
      (r) => r.id,
    );
    let total = 0;
    for (const jobId of jobIds) {
      for (const table of children) {
        total += await deleteInBatches(
          async () =>
            (
              await rows<{ n: number }>(em, batchDeleteSql(`"${table}"`, 'job_id = $1::uuid', '$2'), [
                jobId,
                ACCOUNT_LIMITS.deleteBatchRows,
              ])
            )[0]!.n,
        );
      }
    }
    return total + (await deleteUserRows(em, userId));
  }
}
