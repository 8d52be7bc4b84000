import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JobLogType } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import { JobLogEntity } from './job-log.entity.js';

export type JobLogLine = Pick<JobLogEntity, 'type' | 'message' | 'at'>;

/**
 * The job's row is locked (FOR KEY SHARE) by the statement that writes its lines, once per job, and a
 * line whose job is gone is not written: what the table's foreign key did, one lookup per line, before
 * LogLinesByStatement1798600000000. A job deleted meanwhile waits for the writer's commit, and its
 * deletion's trigger then takes the lines with it.
 */
const ADD_ONE = `WITH owner AS (SELECT id FROM jobs WHERE id = $1 FOR KEY SHARE)
  INSERT INTO job_logs (job_id, type, message) SELECT id, $2, $3 FROM owner RETURNING id::text, at`;
// Unnamed (array-driven, see `rows`): planned for its actual jobs, each looked up by its key.
const ADD_MANY = `WITH owners AS (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) FOR KEY SHARE)
  INSERT INTO job_logs (job_id, type, message)
  SELECT l.job_id, l.type, l.message FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS l(job_id, type, message, n)
   WHERE l.job_id IN (SELECT id FROM owners) ORDER BY l.n
  RETURNING id::text, at`;

/** A log line for a job that is not there (deleted meanwhile): the transaction writing it must not commit. */
export class JobGone extends Error {
  constructor() {
    super('a log line names a job that no longer exists');
  }
}

/** Every statement on `jobs.job_logs`. */
@Injectable()
export class JobLogsRepository {
  /** Appends a line; the database stamps it (millisecond precision). Throws JobGone when the job is not there. */
  async add(
    em: EntityManager,
    jobId: string,
    type: JobLogType,
    message: string,
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>> {
    const added = await row<Pick<JobLogEntity, 'id' | 'at'>>(em, ADD_ONE, [jobId, type, message]);
    if (!added) throw new JobGone();
    return added;
  }

  /**
   * Appends lines in one statement; each one's id and time, in the order given (ids grow in insertion
   * order, and the rows are put back in that order whatever order RETURNING gives them in). Throws
   * JobGone when any line's job is not there.
   */
  async addMany(
    em: EntityManager,
    lines: readonly { jobId: string; type: JobLogType; message: string }[],
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>[]> {
    if (lines.length === 0) return [];
    if (lines.length === 1) return [await this.add(em, lines[0]!.jobId, lines[0]!.type, lines[0]!.message)];
    const added = await rows<Pick<JobLogEntity, 'id' | 'at'>>(em, ADD_MANY, [
      lines.map((l) => l.jobId),
      lines.map((l) => l.type),
      lines.map((l) => l.message),
    ]);
    if (added.length !== lines.length) throw new JobGone();
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
