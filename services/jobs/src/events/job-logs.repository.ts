import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { JOB_MESSAGES, type JobLogType } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import { JobLogEntity } from './job-log.entity.js';

export type JobLogLine = Pick<JobLogEntity, 'type' | 'message' | 'at'>;

/**
 * The "Message sent" line of a recipient sent to. It is not stored: a sent recipient's row (its state
 * and `done_at`, the time it left) is the line, so a send writes one row fewer. `sentLine` is its
 * text; `page` reads these lines from the recipients and the stored ones from `job_logs`, in time order.
 */
export const SENT_LINE_TYPE: JobLogType = 'success';
export const sentLine = (phone: string): string => JOB_MESSAGES.messageSent(phone);

/**
 * The job's row is locked (FOR KEY SHARE) by the statement that writes its lines, once per job, and a
 * line whose job is gone is not written: what the table's foreign key did, one lookup per line, before
 * LogLinesByStatement1798600000000. A job deleted meanwhile waits for the writer's commit, and its
 * deletion's trigger then takes the lines with it.
 */
const STAMP = `date_trunc('milliseconds', clock_timestamp())`;
const ADD_ONE = `WITH owner AS (SELECT id FROM jobs WHERE id = $1 FOR KEY SHARE)
  INSERT INTO job_logs (job_id, type, message, at) SELECT id, $2, $3, coalesce($4, ${STAMP}) FROM owner RETURNING id::text, at`;
// Unnamed (array-driven, see `rows`): planned for its actual jobs, each looked up by its key.
const ADD_MANY = `WITH owners AS (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) FOR KEY SHARE)
  INSERT INTO job_logs (job_id, type, message, at)
  SELECT l.job_id, l.type, l.message, coalesce(l.at, ${STAMP}) FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS l(job_id, type, message, at, n)
   WHERE l.job_id IN (SELECT id FROM owners) ORDER BY l.n
  RETURNING id::text, at`;

/** A log line for a job that is not there (deleted meanwhile): the transaction writing it must not commit. */
export class JobGone extends Error {
  constructor() {
    super('a log line names a job that no longer exists');
  }
}

/** Every statement on `jobs.job_logs` (and the reading of sent recipients as their lines). */
@Injectable()
export class JobLogsRepository {
  /**
   * Appends a line; the database stamps it (millisecond precision) unless it says when it happened
   * (`at`, a millisecond time). Throws JobGone when the job is not there.
   */
  async add(
    em: EntityManager,
    jobId: string,
    type: JobLogType,
    message: string,
    at?: Date,
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>> {
    const added = await row<Pick<JobLogEntity, 'id' | 'at'>>(em, ADD_ONE, [jobId, type, message, at ?? null]);
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
    lines: readonly { jobId: string; type: JobLogType; message: string; at?: Date }[],
  ): Promise<Pick<JobLogEntity, 'id' | 'at'>[]> {
    if (lines.length === 0) return [];
    if (lines.length === 1) {
      const l = lines[0]!;
      return [await this.add(em, l.jobId, l.type, l.message, l.at)];
    }
    const added = await rows<Pick<JobLogEntity, 'id' | 'at'>>(em, ADD_MANY, [
      lines.map((l) => l.jobId),
      lines.map((l) => l.type),
      lines.map((l) => l.message),
      lines.map((l) => l.at ?? null),
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
    const found = await rows<{
      type: JobLogLine['type'] | null;
      message: string | null;
      phone: string | null;
      at: Date | null;
    }>(
      em,
      // Stored lines and sent recipients' lines, each an index range from `after` (a stored line's
      // time has millisecond precision, and so has a sent time compared with a millisecond `after`),
      // merged in time order; at equal times, stored lines first, each kind in its own order.
      `SELECT l.type, l.message, l.phone, l.at
         FROM jobs j
         LEFT JOIN LATERAL (
           (SELECT 0 AS kind, id, type, message, NULL::text AS phone, at FROM job_logs WHERE job_id = j.id AND at > $3 ORDER BY at, id LIMIT $4)
           UNION ALL
           (SELECT 1, seq, $5, NULL, phone, date_trunc('milliseconds', done_at) FROM job_recipients
             WHERE job_id = j.id AND state = 'sent' AND done_at >= $3::timestamptz + interval '1 millisecond' ORDER BY done_at, seq LIMIT $4)
           ORDER BY at, kind, id LIMIT $4) l ON true
        WHERE j.id = $1 AND ($2::text IS NULL OR j.user_id = $2)
        ORDER BY l.at, l.kind, l.id`,
      [jobId, userId, after, limit, SENT_LINE_TYPE],
    );
    if (found.length === 0) return undefined;
    return found
      .filter((l) => l.type !== null)
      .map((l) => ({ type: l.type!, message: l.phone !== null ? sentLine(l.phone) : l.message!, at: l.at! }));
  }
}
