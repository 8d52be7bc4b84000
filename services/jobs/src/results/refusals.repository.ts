import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { row, rows } from '@bns/service-kit';
import type { JobEntity } from '../store/job.entity.js';
import { USER_RESUMED_SQL } from '../store/jobs.repository.js';

/** A job's counts after a refusal moved one of its recipients from sent to failed, or after a pause. */
export type RefusedJob = Pick<JobEntity, 'id' | 'status' | 'total' | 'sent' | 'failed' | 'skipped'>;

const RETURNING = `j.id, j.status, j.total, j.sent, j.failed, j.skipped`;

/**
 * Every statement of sends WhatsApp accepted and then refused: the recipient goes from sent to failed,
 * the account's streak of refusals to numbers it never talked to, and the pause that streak ends in.
 */
@Injectable()
export class RefusalsRepository {
  /**
   * The recipient (of that user's job) goes from sent to failed with `error`, and the job's counts
   * follow, in one statement. Nothing changes (undefined) when it is not a sent recipient of the user's
   * job, was failed already (a redelivered event), or was delivered (a late error ack loses to it).
   */
  failSent(
    em: EntityManager,
    userId: string,
    jobId: string,
    phone: string,
    error: string,
  ): Promise<RefusedJob | undefined> {
    return row<RefusedJob>(
      em,
      `WITH r AS (
         UPDATE job_recipients x SET state = 'failed', error = $4
           FROM jobs o
          WHERE x.job_id = $1 AND x.phone = $3 AND o.id = x.job_id AND o.user_id = $2
            AND x.state = 'sent' AND x.delivered_at IS NULL
         RETURNING x.job_id)
       UPDATE jobs j SET sent = j.sent - 1, failed = j.failed + 1 FROM r WHERE j.id = r.job_id
       RETURNING ${RETURNING}`,
      [jobId, userId, phone, error],
    );
  }

  /** Whether the account ever talked to the number: a message of its delivered or answered. */
  async talkedBefore(em: EntityManager, userId: string, phone: string): Promise<boolean> {
    const found = await row(
      em,
      `SELECT 1 FROM job_recipients r JOIN jobs j ON j.id = r.job_id
        WHERE r.phone = $2 AND r.state = 'sent' AND j.user_id = $1
          AND (r.delivered_at IS NOT NULL OR r.replied_at IS NOT NULL)
        LIMIT 1`,
      [userId, phone],
    );
    return found !== undefined;
  }

  /** One more refusal to a new contact in the account's row; how many now. */
  async countRefusal(em: EntityManager, userId: string, at: Date): Promise<number> {
    const found = await row<{ inRow: number }>(
      em,
      `INSERT INTO refusal_streaks AS s (user_id, in_row, last_at) VALUES ($1, 1, $2)
       ON CONFLICT (user_id) DO UPDATE SET in_row = s.in_row + 1, last_at = greatest(s.last_at, excluded.last_at)
       RETURNING s.in_row AS "inRow"`,
      [userId, at],
    );
    return found!.inRow;
  }

  /** The row ends for these accounts: a message of theirs was delivered after their last refusal. */
  async endStreaks(em: EntityManager, delivered: readonly { userId: string; at: Date }[]): Promise<void> {
    if (delivered.length === 0) return;
    await rows(
      em,
      `UPDATE refusal_streaks s SET in_row = 0
         FROM (SELECT user_id, max(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS d(user_id, at) GROUP BY user_id) d
        WHERE s.user_id = d.user_id AND s.in_row > 0 AND d.at > s.last_at`,
      [delivered.map((d) => d.userId), delivered.map((d) => d.at)],
    );
  }

  async resetStreak(em: EntityManager, userId: string): Promise<void> {
    await rows(em, `UPDATE refusal_streaks SET in_row = 0 WHERE user_id = $1`, [userId]);
  }

  /**
   * Pauses every job of the account that could still send (`refused`: only the user resumes it); jobs the
   * user paused stay as they are. Answers the jobs it paused.
   */
  pauseOpenJobs(em: EntityManager, userId: string): Promise<RefusedJob[]> {
    return rows<RefusedJob>(
      em,
      `UPDATE jobs j SET status = 'paused', paused_reason = 'refused', resumes_at = NULL
        WHERE j.user_id = $1
          AND (j.status IN ('queued', 'scheduled', 'running') OR (j.status = 'paused' AND j.paused_reason NOT IN ${USER_RESUMED_SQL}))
       RETURNING ${RETURNING}`,
      [userId],
    );
  }
}
