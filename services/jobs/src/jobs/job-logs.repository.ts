import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JobLogType } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
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

  /**
   * Appends lines in one statement; each one's id and time, in the order given (ids grow in insertion
   * order, and the rows are put back in that order whatever order RETURNING gives them in).
   */
  async addMany(em: EntityManager, lines: readonly { jobId: string; type: JobLogType; message: string }[]): Promise<Pick<JobLogEntity, 'id' | 'at'>[]> {
    if (lines.length === 0) return [];
    if (lines.length === 1) return [await this.add(em, lines[0]!.jobId, lines[0]!.type, lines[0]!.message)];
    const added = await rows<Pick<JobLogEntity, 'id' | 'at'>>(
      em,
      `INSERT INTO job_logs (job_id, type, message)
       SELECT job_id, type, message FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS l(job_id, type, message, n) ORDER BY n
       RETURNING id::text, at`,
      [lines.map((l) => l.jobId), lines.map((l) => l.type), lines.map((l) => l.message)],
    );
    return added.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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
