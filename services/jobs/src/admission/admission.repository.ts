import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CAPPED_JOB_STATUSES } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import { selectList } from '../store/columns.js';
import type { JobEntity } from '../store/job.entity.js';
import { JOB_COLUMNS } from '../store/jobs.repository.js';
import type { JobStartEntity } from './job-start.entity.js';

/** What a replayed start answers with, from the job its key made. */
const STARTED_JOB_KEYS = ['id', 'status', 'total', 'estimatedMinutes', 'estimatedFinishAt'] as const;
export type StartedJob = Pick<JobEntity, (typeof STARTED_JOB_KEYS)[number]> & Pick<JobStartEntity, 'requestHash'>;
const STARTED_JOB = selectList(JOB_COLUMNS, STARTED_JOB_KEYS, 'j');

const CAPPED = `(${CAPPED_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Every statement of a job's admission: its idempotency key (`jobs.job_starts`) and the per-user caps. */
@Injectable()
export class AdmissionRepository {
  /** The job a key already made, with the hash of the body it came with. */
  findStart(em: EntityManager, userId: string, key: string): Promise<StartedJob | undefined> {
    return row<StartedJob>(
      em,
      `SELECT ${STARTED_JOB}, s.request_hash AS "requestHash"
         FROM job_starts s JOIN jobs j ON j.id = s.job_id
        WHERE s.user_id = $1 AND s.idempotency_key = $2`,
      [userId, key],
    );
  }

  /**
   * Claims the key for `jobId` in the caller's transaction. False when another start holds it: then
   * that one committed first (or this waited for it to), and the caller replays it.
   */
  async claimStart(
    em: EntityManager,
    userId: string,
    key: string,
    requestHash: string,
    jobId: string,
  ): Promise<boolean> {
    const claimed = await rows(
      em,
      `INSERT INTO job_starts (user_id, idempotency_key, request_hash, job_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING 1`,
      [userId, key, requestHash, jobId],
    );
    return claimed.length > 0;
  }

  /** The user's work in flight: active jobs and recipients not yet done in them. */
  async inFlight(em: EntityManager, userId: string): Promise<{ jobs: number; recipients: number }> {
    const found = await row<{ jobs: number; recipients: number }>(
      em,
      `SELECT count(*)::int AS jobs, coalesce(sum(total - sent - failed), 0)::int AS recipients
         FROM jobs WHERE user_id = $1 AND status IN ${CAPPED}`,
      [userId],
    );
    return found!;
  }
}
