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
  async add(
    em: EntityManager,
    jobId: string,
    type: JobLogType,
    message: string,
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>> {
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
  async addMany(
    em: EntityManager,
    lines: readonly { jobId: string; type: JobLogType; message: string }[],
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>[]> {
    if (lines.length === 0) return [];
    if (lines.length === 1) return [await this.add(em, lines[0]!.jobId, lines[0]!.type, lines[0]!.message)];
    const added = await rows<Pick<JobLogEntity, 'id' | 'at'>>(
      em,
      `INSERT INTO job_logs (job_id, type, message)
       SELECT job_id, type, message FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS l(job_id, type, message, n) ORDER BY n
       RETURNING id::text, at`,
      [lines.map((l) => l.jobId), lines.map((l) => l.type), lines.map((l) => l.message)],
      // An insert of its arrays reads no table, so no plan of it can scan one: prepared wherever it runs.
      { prepare: 'always' },
    );
    return added.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Lines strictly after `after`, oldest first (ties in insertion order), at most `limit`. */
  async page(em: EntityManager, jobId: string, after: Date, limit: number): Promise<JobLogLine[]> {
    return (await this.pageOf(em, null, jobId, after, limit)) ?? [];
  }

  /** The same page of the user's job, in one statement with the ownership check; undefined when the user has no such job. */
  pageOwned(
    em: EntityManager,
    userId: string,
    jobId: string,
    after: Date,
    limit: number,
  ): Promise<JobLogLine[] | undefined> {
    return this.pageOf(em, userId, jobId, after, limit);
  }

  private async pageOf(
    em: EntityManager,
    userId: string | null,
    jobId: string,
    after: Date,
    limit: number,
  ): Promise<JobLogLine[] | undefined> {
    const found = await rows<{ type: JobLogLine['type'] | null; message: string | null; at: Date | null }>(
      em,
      `SELECT l.type, l.message, l.at
         FROM jobs j
         LEFT JOIN LATERAL (SELECT id, type, message, at FROM job_logs WHERE job_id = j.id AND at > $3 ORDER BY at, id LIMIT $4) l ON true
        WHERE j.id = $1 AND ($2::text IS NULL OR j.user_id = $2)
        ORDER BY l.at, l.id`,
      [jobId, userId, after, limit],
    );
    if (found.length === 0) return undefined;
    return found.filter((l) => l.type !== null).map((l) => ({ type: l.type!, message: l.message!, at: l.at! }));
  }
}
