import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JobLogType } from '@bns/contracts';
import { row } from '@bns/service-kit';
import { JobLogEntity } from './job-log.entity.js';

export type JobLogLine = Pick<JobLogEntity, 'type' | 'message' | 'at'>;

/** Every statement on `jobs.job_logs`. */
@Injectable()
export class JobLogsRepository {
  /** Appends a line; the database stamps it (millisecond precision). */
  async add(em: EntityManager, jobId: string, type: JobLogType, message: string): Promise<Pick<JobLogEntity, 'id' | 'at'>> {
    const added = await row<Pick<JobLogEntity, 'id' | 'at'>>(
      em,
      `INSERT INTO job_logs (job_id, type, message) VALUES ($1, $2, $3) RETURNING id::text, at`,
      [jobId, type, message],
    );
    return added!;
  }

  /** Lines strictly after `after`, oldest first (ties in insertion order), at most `limit`. */
  page(em: EntityManager, jobId: string, after: Date, limit: number): Promise<JobLogLine[]> {
    return em
      .getRepository(JobLogEntity)
      .createQueryBuilder('l')
      .select(['l.id', 'l.type', 'l.message', 'l.at'])
      .where('l.job_id = :jobId AND l.at > :after', { jobId, after })
      .orderBy('l.at', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .limit(limit)
      .getMany();
  }
}
