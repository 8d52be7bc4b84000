import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS } from '@bns/contracts';
import {
  batchDeleteSql,
  deleteInBatches,
  deleteUserRows,
  rows,
  Transactions,
  type AccountData,
} from '@bns/service-kit';

/**
 * The user's read model (messages, replies, totals, monthly usage, link states, sessions) and
 * preferences: every table with a user_id. First the ids of applied events of the user's jobs: a job's
 * message event id holds its recipient's number (`<jobId>:<number>:<status>`), and that table has no user_id.
 */
@Injectable()
export class DashboardAccountData implements AccountData {
  constructor(private readonly tx: Transactions) {}

  async deleteUser(userId: string): Promise<number> {
    const em = this.tx.manager;
    const jobs = (
      await rows<{ job_id: string }>(em, `SELECT DISTINCT job_id FROM messages WHERE user_id = $1`, [userId])
    ).map((r) => r.job_id);
    let total = 0;
    for (const jobId of jobs) {
      total += await deleteInBatches(
        async () =>
          (
            await rows<{ n: number }>(
              em,
              batchDeleteSql('applied_events', `(event_id LIKE $1 OR event_id LIKE $2)`, '$3'),
              [`${likeEscaped(jobId)}:%`, `job-progress:${likeEscaped(jobId)}:%`, ACCOUNT_LIMITS.deleteBatchRows],
            )
          )[0]!.n,
      );
    }
    return total + (await deleteUserRows(em, userId));
  }
}

function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
