import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryPartialEntity } from 'typeorm';
import { JOB_MESSAGES, type JobStatus, type PausedReason } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import { JobEntity } from './job.entity.js';
import { inFlightSql } from './recipient-state.sql.js';
import { STEP_PREPARED } from '../queue/step-planning.js';

/** What the lane step reads of a job. */
export type LaneJob = Pick<
  JobEntity,
  'id' | 'status' | 'message' | 'total' | 'sent' | 'failed' | 'skipped' | 'unlinkedSince' | 'pausedReason' | 'resumesAt' | 'startedAt'
>;
/** What the job view shows, with the lane's next slot while the job is running. */
export type JobSummary = Pick<
  JobEntity,
  | 'id'
  | 'status'
  | 'total'
  | 'sent'
  | 'failed'
  | 'skipped'
  | 'error'
  | 'estimatedMinutes'
  | 'createdAt'
  | 'startedAt'
  | 'finishedAt'
  | 'startAt'
  | 'pausedReason'
  | 'resumesAt'
  | 'estimatedFinishAt'
> & { nextSendAt: Date | null };
/**
 * A job's status answer as stored: its head, and its `results` as the answer shows them (the newest
 * entries of each list, oldest first), as JSON text made by Postgres: `{"skippedList":[...],
 * "successList":[...],"failedList":[...]}`. The lists go from the row to the gateway's answer as text,
 * never as objects in between (thousands of entries parsed and written again at every hop
 * cost more than the rest of the answer).
 */
export type JobStatusRow = JobSummary & { resultsJson: string };
export type NewJob = Pick<
  JobEntity,
  'id' | 'userId' | 'clientId' | 'message' | 'total' | 'delayMs' | 'estimatedMinutes' | 'status' | 'startAt' | 'estimatedFinishAt'
> &
  /** Recipients skipped at start (opted out or not on WhatsApp); none when absent. */
  Partial<Pick<JobEntity, 'skipped' | 'transactional'>>;

const JOB_SUMMARY = `j.id, j.status, j.total, j.sent, j.failed, j.skipped, j.error, j.estimated_minutes AS "estimatedMinutes",
  j.created_at AS "createdAt", j.started_at AS "startedAt", j.finished_at AS "finishedAt",
  j.start_at AS "startAt", j.paused_reason AS "pausedReason", j.resumes_at AS "resumesAt",
  j.estimated_finish_at AS "estimatedFinishAt",
  CASE WHEN j.status = 'running' THEN l.next_send_at END AS "nextSendAt"`;

/** A timestamptz as `Date.toISOString()` writes it (UTC, milliseconds truncated like a Date read from the row). */
const isoMs = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A JSON object's text from `[key, SQL value]` pairs, compact as JSON.stringify writes it (null for NULL). */
const jsonObjectText = (fields: [string, string][]) =>
  `'{' || ${fields.map(([key, value], i) => `'${i > 0 ? ',' : ''}"${key}":' || coalesce(to_json(${value})::text, 'null')`).join(' || ')} || '}'`;
/** A JSON array's text of `entry` over `fromSql` in `orderBy`. */
const jsonArrayText = (entry: string, orderBy: string, fromSql: string) => `(SELECT '[' || coalesce(string_agg(${entry}, ',' ORDER BY ${orderBy}), '') || ']' FROM ${fromSql})`;

/** A job's newest $3 recipients in `state`, oldest first, as the answer's list (`fields` of `d`). */
const newestDone = (state: 'sent' | 'failed', fields: [string, string][]) =>
  jsonArrayText(
    jsonObjectText(fields),
    'd.done_at, d.seq',
    `(SELECT phone, seq, done_at, error FROM job_recipients WHERE job_id = j.id AND state = '${state}' ORDER BY done_at DESC, seq DESC LIMIT $3) d`,
  );
const RESULTS_JSON = `'{"skippedList":' || ${jsonArrayText(
  jsonObjectText([['phoneNumber', 's.phone'], ['reason', 's.reason'], ['timestamp', isoMs('s.at')]]),
  's.at, s.phone',
  '(SELECT phone, reason, at FROM job_skips WHERE job_id = j.id ORDER BY at DESC, phone DESC LIMIT $3) s',
)}
  || ',"successList":' || ${newestDone('sent', [['originalNumber', 'd.phone'], ['timestamp', isoMs('d.done_at')]])}
  || ',"failedList":' || ${newestDone('failed', [['phoneNumber', 'd.phone'], ['timestamp', isoMs('d.done_at')], ['error', 'coalesce(d.error, $4)']])} || '}'`;

// Polled statements are built once: a statement's text is looked up (hashed) on every call to find
// its prepared name, and a string built per call is hashed afresh each time.
const FIND_OWNED_SQL = `SELECT ${JOB_SUMMARY}
         FROM jobs j LEFT JOIN lanes l ON l.user_id = j.user_id
        WHERE j.id = $1 AND j.user_id = $2`;
const FIND_OWNED_LOCKED_SQL = `${FIND_OWNED_SQL} FOR UPDATE OF j`;
const STATUS_OF_SQL = `SELECT ${JOB_SUMMARY}, ${RESULTS_JSON} AS "resultsJson"
         FROM jobs j LEFT JOIN lanes l ON l.user_id = j.user_id
        WHERE j.id = $1 AND j.user_id = $2`;

const LANE_JOB = `id, status, message, total, sent, failed, skipped, unlinked_since AS "unlinkedSince", paused_reason AS "pausedReason",
  resumes_at AS "resumesAt", started_at AS "startedAt"`;
const LANE_JOB_KEYS = ['id', 'status', 'message', 'total', 'sent', 'failed', 'skipped', 'unlinkedSince', 'pausedReason', 'resumesAt', 'startedAt'] as const;
/** Statuses in which a job still holds work for its lane. */
const OPEN = `('queued', 'scheduled', 'running', 'paused')`;
/**
 * Jobs the lane may send for now: not paused by the user, and scheduled ones once their time is
 * within `leadSecsSql` (the step that prepares a send runs that long before its slot).
 */
const workableSql = (leadSecsSql: string) =>
  `(status IN ('queued', 'running') OR (status = 'paused' AND paused_reason <> 'user') OR (status = 'scheduled' AND start_at <= now() + make_interval(secs => ${leadSecsSql})))`;

/**
 * The user's oldest job the lane may send for now, locked: an account sends one job at a time, in
 * order; a job the user paused steps aside, a scheduled one waits for its time. `userIdSql` is the
 * user's id as the enclosing statement has it (a parameter, or a column for a LATERAL join). NO KEY:
 * the rows that reference the job (log lines, receipts) are written meanwhile without waiting for the step.
 *
 * A scheduled job is taken up to `leadSecsSql` before its start, like any send prepared ahead of its
 * slot; its `slotFloor` (the start) says when its first message may leave, which the lane's slot must
 * not precede.
 */
export function nextWorkableJobSql(userIdSql: string, leadSecsSql: string): string {
  return `SELECT ${LANE_JOB}, CASE WHEN status = 'scheduled' THEN start_at END AS "slotFloor"
            FROM jobs WHERE user_id = ${userIdSql} AND status IN ${OPEN} AND ${workableSql(leadSecsSql)} ORDER BY transactional DESC, created_at, id LIMIT 1 FOR NO KEY UPDATE`;
}

/** The columns of `nextWorkableJobSql` read from its alias in an enclosing statement; read them with `laneJobOf`. */
export function laneJobColumnsSql(alias: string): string {
  return LANE_JOB_KEYS.map((k) => `${alias}."${k}" AS "job_${k}"`).join(', ');
}

/** The job `laneJobColumnsSql` read; undefined when there was none. */
export function laneJobOf(found: Record<string, unknown>): LaneJob | undefined {
  if (found.job_id == null) return undefined;
  return Object.fromEntries(LANE_JOB_KEYS.map((k) => [k, found[`job_${k}`]])) as unknown as LaneJob;
}

/** The job's count of one more outcome, up to its FROM or WHERE; a send also clears the unlinked mark. */
function countOutcomeSql(column: 'sent' | 'failed'): string {
  const relinked =
    column === 'sent'
      ? `unlinked_since = NULL,
              paused_reason = CASE WHEN paused_reason = 'unlinked' THEN NULL ELSE paused_reason END,
              resumes_at = CASE WHEN paused_reason = 'unlinked' THEN NULL ELSE resumes_at END,`
      : '';
  return `UPDATE jobs SET ${column} = ${column} + 1, ${relinked}
              status = CASE WHEN status IN ('running', 'paused') AND sent + failed + skipped + 1 >= total THEN 'completed' ELSE status END,
              finished_at = CASE WHEN status IN ('running', 'paused') AND sent + failed + skipped + 1 >= total THEN now() ELSE finished_at END`;
}

/**
 * A batch of sends recorded, as two CTEs: `done` (the recipients) and `counted` (their jobs as counted), for every row of `req`, a CTE of the
 * sends (columns `p_job_id`, `p_seq`, `p_at`, `p_paced` and the row's index `p_i`); `counted`
 * returns `p_i` with the job's `LANE_JOB` columns, for the sends whose recipient was still in flight.
 * A batch holds one send per job (a lane steps one at a time), so each job counts one.
 */
export function recordSentCtes(req: string): string {
  return `done AS (
      UPDATE job_recipients t SET state = 'sent', in_flight = false, done_at = ${req}.p_at, error = NULL, paced_ms = ${req}.p_paced FROM ${req}
       WHERE t.job_id = ${req}.p_job_id AND t.seq = ${req}.p_seq AND ${inFlightSql('t')} RETURNING ${req}.p_i, ${req}.p_job_id),
    counted AS (${countOutcomeSql('sent')} FROM done WHERE jobs.id = done.p_job_id RETURNING done.p_i, ${LANE_JOB})`;
}

/** Every statement on `jobs.jobs`. */
@Injectable()
export class JobsRepository {
  async insert(em: EntityManager, job: NewJob): Promise<void> {
    await em.createQueryBuilder().insert().into(JobEntity).values(job).updateEntity(false).execute();
  }

  /** Jobs of the user a new job waits behind: queued, running, or paused by the policy (not scheduled, not paused by the user). */
  async countAhead(em: EntityManager, userId: string): Promise<number> {
    const found = await row<{ n: number }>(
      em,
      `SELECT count(*)::int AS n FROM jobs WHERE user_id = $1 AND status IN ${OPEN} AND (status IN ('queued', 'running') OR (status = 'paused' AND paused_reason <> 'user'))`,
      [userId],
    );
    return found!.n;
  }

  /** The user's job (never another user's), optionally locked for the caller's transaction. */
  findOwned(em: EntityManager, userId: string, jobId: string, lock = false): Promise<JobSummary | undefined> {
    return row<JobSummary>(em, lock ? FIND_OWNED_LOCKED_SQL : FIND_OWNED_SQL, [jobId, userId]);
  }

  /**
   * The job-status answer's data in one statement, so in one snapshot and one round trip: the head
   * and the newest `listMax` of each result list (sent, failed, skipped), each list oldest first
   * (by time, then by recipient order or number), timestamps as ISO strings at millisecond precision
   * (truncated, as a Date read from the row would be). Undefined when the user has no such job.
   */
  statusOf(em: EntityManager, userId: string, jobId: string, listMax: number): Promise<JobStatusRow | undefined> {
    return row<JobStatusRow>(em, STATUS_OF_SQL, [jobId, userId, listMax, JOB_MESSAGES.sendFailed]);
  }

  get(em: EntityManager, jobId: string): Promise<LaneJob | undefined> {
    return row<LaneJob>(em, `SELECT ${LANE_JOB} FROM jobs WHERE id = $1`, [jobId]);
  }

  /**
   * What a lane whose step found no workable job should do, read in a statement of its own (so with a
   * fresh snapshot, while the caller still holds the lane's lock): `workable` when a workable job is
   * there after all, and when the user's next scheduled job is due, if any.
   *
   * The step's lock statement can miss a job: when a start held the lane's lock, the step waited for
   * it, and under READ COMMITTED Postgres then re-reads only the lane row, not the job the start
   * committed with it. Deciding "no more work" on that would leave the job queued with the lane at rest.
   */
  async afterNoJob(em: EntityManager, userId: string, leadMs: number): Promise<{ workable: boolean; nextStart: Date | undefined }> {
    const found = await row<{ workable: boolean; at: Date | null }>(
      em,
      `SELECT EXISTS (SELECT 1 FROM jobs WHERE user_id = $1 AND status IN ${OPEN} AND ${workableSql('$2')}) AS workable,
              (SELECT min(start_at) FROM jobs WHERE user_id = $1 AND status = 'scheduled') AS at`,
      [userId, leadMs / 1000],
    );
    return { workable: found?.workable ?? false, nextStart: found?.at ?? undefined };
  }

  /** Sending (again), for a batch of lane steps: started now unless it had started before; any pause is over. */
  async markRunningMany(em: EntityManager, jobIds: string[]): Promise<void[]> {
    await rows(
      em,
      // A scheduled job taken ahead of its start has started at its start, when its first message leaves.
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, CASE WHEN status = 'scheduled' THEN greatest(now(), start_at) ELSE now() END),
              paused_reason = NULL, resumes_at = NULL
        WHERE id IN (SELECT unnest($1::uuid[]))`,
      [jobIds],
      STEP_PREPARED,
    );
    return jobIds.map(() => undefined);
  }

  /** Waits: for the user (`user`, no end) or for its policy until `resumesAt`. */
  async pause(em: EntityManager, jobId: string, reason: PausedReason, resumesAt: Date | null): Promise<void> {
    await this.update(em, jobId, { status: 'paused', pausedReason: reason, resumesAt });
  }

  /** The user resumes: back to scheduled if its time has not come, else to where it was; the lane decides the rest. */
  async resume(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, {
      status: () => `CASE WHEN start_at > now() THEN 'scheduled' WHEN started_at IS NULL THEN 'queued' ELSE 'running' END`,
      pausedReason: null,
      resumesAt: null,
    });
  }

  async complete(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, { status: 'completed', finishedAt: () => 'now()', pausedReason: null, resumesAt: null });
  }

  async cancel(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, { status: 'cancelled', finishedAt: () => 'now()', pausedReason: null, resumesAt: null });
  }

  async fail(em: EntityManager, jobId: string, reason: string): Promise<void> {
    await this.update(em, jobId, { status: 'failed', error: reason, finishedAt: () => 'now()', pausedReason: null, resumesAt: null });
  }

  /**
   * Records a recipient's failure and counts it in its job, in one statement: the recipient (still
   * in flight: a worker that lost its lane records nothing) becomes failed, and the job is counted: it
   * completes with its last recipient, skipped ones counted (sent + failed + skipped reaches total; a
   * cancelled job stays cancelled). Returns the job as counted, or undefined when the recipient was
   * not in flight (nothing changed). Sends are recorded by `LaneRepository.recordSentMany`.
   */
  recordFailed(em: EntityManager, jobId: string, seq: number, error: string): Promise<LaneJob | undefined> {
    return row<LaneJob>(
      em,
      `WITH done AS (UPDATE job_recipients r SET state = 'failed', in_flight = false, attempts = attempts + 1, error = $3, done_at = now()
                      WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r')} RETURNING 1),
            counted AS (${countOutcomeSql('failed')} WHERE id = $1 AND EXISTS (SELECT 1 FROM done) RETURNING ${LANE_JOB})
       SELECT * FROM counted`,
      [jobId, seq, error],
    );
  }

  /**
   * `n` more recipients skipped (opted out or not on WhatsApp since the job was created). The
   * lane step completes the job itself when nothing is left to take, so the status is left alone here.
   */
  async countSkipped(em: EntityManager, jobId: string, n: number): Promise<LaneJob> {
    const job = await row<LaneJob>(em, `UPDATE jobs SET skipped = skipped + $2 WHERE id = $1 RETURNING ${LANE_JOB}`, [jobId, n]);
    return job!;
  }

  /** The account is not linked: the job keeps running but says it waits, and until when it looks again. */
  async markWaitingForLink(em: EntityManager, jobId: string, resumesAt: Date): Promise<void> {
    await em
      .createQueryBuilder()
      .update(JobEntity)
      .set({ pausedReason: 'unlinked', resumesAt })
      .where(`id = :jobId AND status = 'running'`, { jobId })
      .execute();
  }

  /** Marks the job unlinked since now unless it already was; says for how long and whether this is the first time. */
  markUnlinked(em: EntityManager, jobId: string): Promise<{ status: JobStatus; first: boolean; unlinkedMs: number } | undefined> {
    return row(
      em,
      `UPDATE jobs SET unlinked_since = coalesce(unlinked_since, now()) WHERE id = $1
       RETURNING status, unlinked_since = now() AS first, (extract(epoch FROM now() - unlinked_since) * 1000)::float8 AS "unlinkedMs"`,
      [jobId],
    );
  }

  private async update(em: EntityManager, jobId: string, set: QueryPartialEntity<JobEntity>): Promise<void> {
    await em.createQueryBuilder().update(JobEntity).set(set).where('id = :jobId', { jobId }).execute();
  }
}
