import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryPartialEntity } from 'typeorm';
import {
  JOB_MESSAGES,
  USER_RESUMED_REASONS,
  type JobAttachment,
  type JobStatus,
  type PausedReason,
} from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import {
  copyRecipients,
  COPY_RECIPIENTS_FROM,
  insertRecipientsSql,
  textsParam,
  variablesParam,
} from './recipients.repository.js';
import { selectList, type ColumnMap } from './columns.js';
import { laneSlotSql } from './lane-slot.js';
import { JobEntity } from './job.entity.js';

/** The column map of `jobs.jobs`: every statement in this service that names a job's fields reads it from here. */
export const JOB_COLUMNS = {
  id: 'id',
  userId: 'user_id',
  clientId: 'client_id',
  status: 'status',
  message: 'message',
  total: 'total',
  sent: 'sent',
  failed: 'failed',
  skipped: 'skipped',
  error: 'error',
  delayMs: 'delay_ms',
  estimatedMinutes: 'estimated_minutes',
  unlinkedSince: 'unlinked_since',
  createdAt: 'created_at',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  startAt: 'start_at',
  pausedReason: 'paused_reason',
  resumesAt: 'resumes_at',
  estimatedFinishAt: 'estimated_finish_at',
  transactional: 'transactional',
  personalised: 'personalised',
  media: 'media',
} as const satisfies ColumnMap<JobEntity>;

/** A job's attachment as the report names it (id, kind, file name, size) from its reference; NULL for text only. */
const JOB_ATTACHMENT_SQL = (alias: string) =>
  `CASE WHEN ${alias}.media IS NOT NULL THEN jsonb_build_object('mediaId', ${alias}.media->'mediaId', 'kind', ${alias}.media->'kind', 'fileName', ${alias}.media->'fileName', 'size', ${alias}.media->'size') END`;

/** Statuses in which a job still holds work for its lane. */
export const OPEN_JOB_STATUSES = ['queued', 'scheduled', 'running', 'paused'] as const satisfies readonly JobStatus[];
const OPEN = `(${OPEN_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;
/** Paused reasons only the user ends, as an SQL list: such a job steps aside in the lane. */
export const USER_RESUMED_SQL = `(${USER_RESUMED_REASONS.map((r) => `'${r}'`).join(', ')})`;

/**
 * How many jobs of the user `userSql` (an SQL expression) a new job waits behind, as a scalar subquery:
 * queued, running, or paused by the policy (not scheduled, not paused by the user).
 */
export const countAheadSql = (userSql: string) =>
  `(SELECT count(*)::int FROM jobs WHERE user_id = ${userSql} AND status IN ${OPEN} AND (status IN ('queued', 'running') OR (status = 'paused' AND paused_reason NOT IN ${USER_RESUMED_SQL})))`;

/** What the lane step reads of a job. */
export const LANE_JOB_KEYS = [
  'id',
  'status',
  'message',
  'total',
  'sent',
  'failed',
  'skipped',
  'unlinkedSince',
  'pausedReason',
  'resumesAt',
  'startedAt',
  'media',
] as const;

export type LaneJob = Pick<JobEntity, (typeof LANE_JOB_KEYS)[number]>;
/** What the job view shows of a job's own row. */
const SUMMARY_KEYS = [
  'id',
  'status',
  'total',
  'sent',
  'failed',
  'skipped',
  'error',
  'estimatedMinutes',
  'createdAt',
  'startedAt',
  'finishedAt',
  'startAt',
  'pausedReason',
  'resumesAt',
  'estimatedFinishAt',
] as const;
/** What the job view shows, with the lane's next slot while the job is running. */
export type JobSummary = Pick<JobEntity, (typeof SUMMARY_KEYS)[number]> & {
  nextSendAt: Date | null;
  /** The job's attachment as the report names it; null for text only. */
  attachment: JobAttachment | null;
};
/**
 * A job's status answer as stored: its head, and its `results` as the answer shows them (the newest
 * entries of each list, oldest first), as JSON text made by Postgres: `{"skippedList":[...],
 * "successList":[...],"failedList":[...]}`. The lists go from the row to the gateway's answer as text,
 * never as objects in between (thousands of entries parsed and written again at every hop
 * cost more than the rest of the answer).
 */
export type JobStatusRow = JobSummary & { resultsJson: string };
/**
 * A job as its start stores it: every column but those its life sets later (counts, times, pauses),
 * so a column added for the start is one the start must fill.
 */
export type NewJob = Omit<
  JobEntity,
  | 'sent'
  | 'failed'
  | 'skipped'
  | 'error'
  | 'unlinkedSince'
  | 'createdAt'
  | 'startedAt'
  | 'finishedAt'
  | 'pausedReason'
  | 'resumesAt'
  | 'transactional'
  | 'personalised'
  // Set with the attachment's holds in the start's transaction (MediaRepository.attachToJob).
  | 'media'
> &
  /** Recipients skipped at start (opted out or not on WhatsApp); none when absent. */
  Partial<Pick<JobEntity, 'skipped' | 'transactional' | 'personalised'>>;

const JOB_SUMMARY = `${selectList(JOB_COLUMNS, SUMMARY_KEYS, 'j')},
  CASE WHEN j.status = 'running' THEN ${laneSlotSql('l')} END AS "nextSendAt",
  ${JOB_ATTACHMENT_SQL('j')} AS "attachment"`;

/** A timestamptz as `Date.toISOString()` writes it (UTC, milliseconds truncated like a Date read from the row). */
const isoMs = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A JSON object's text from `[key, SQL value]` pairs, compact as JSON.stringify writes it (null for NULL). */
const jsonObjectText = (fields: [string, string][]) =>
  `'{' || ${fields.map(([key, value], i) => `'${i > 0 ? ',' : ''}"${key}":' || coalesce(to_json(${value})::text, 'null')`).join(' || ')} || '}'`;
/** A JSON array's text of `entry` over `fromSql` in `orderBy`. */
const jsonArrayText = (entry: string, orderBy: string, fromSql: string) =>
  `(SELECT '[' || coalesce(string_agg(${entry}, ',' ORDER BY ${orderBy}), '') || ']' FROM ${fromSql})`;

/** A job's newest $3 recipients in `state`, oldest first, as the answer's list (`fields` of `d`). */
const newestDone = (state: 'sent' | 'failed', fields: [string, string][]) =>
  jsonArrayText(
    jsonObjectText(fields),
    'd.done_at, d.seq',
    `(SELECT phone, seq, done_at, error FROM job_recipients WHERE job_id = j.id AND state = '${state}' ORDER BY done_at DESC, seq DESC LIMIT $3) d`,
  );
const RESULTS_JSON = `'{"skippedList":' || ${jsonArrayText(
  jsonObjectText([
    ['phoneNumber', 's.phone'],
    ['reason', 's.reason'],
    ['timestamp', isoMs('s.at')],
  ]),
  's.at, s.phone',
  '(SELECT phone, reason, at FROM job_skips WHERE job_id = j.id ORDER BY at DESC, phone DESC LIMIT $3) s',
)}
  || ',"successList":' || ${newestDone('sent', [
    ['originalNumber', 'd.phone'],
    ['timestamp', isoMs('d.done_at')],
  ])}
  || ',"failedList":' || ${newestDone('failed', [
    ['phoneNumber', 'd.phone'],
    ['timestamp', isoMs('d.done_at')],
    ['error', 'coalesce(d.error, $4)'],
  ])} || '}'`;

// Polled statements are built once: a statement's text is looked up (hashed) on every call to find
// its prepared name, and a string built per call is hashed afresh each time.
const FIND_OWNED_SQL = `SELECT ${JOB_SUMMARY}
         FROM jobs j LEFT JOIN lanes l ON l.user_id = j.user_id
        WHERE j.id = $1 AND j.user_id = $2`;
const FIND_OWNED_LOCKED_SQL = `${FIND_OWNED_SQL} FOR UPDATE OF j`;
const STATUS_OF_SQL = `SELECT ${JOB_SUMMARY}, ${RESULTS_JSON} AS "resultsJson"
         FROM jobs j LEFT JOIN lanes l ON l.user_id = j.user_id
        WHERE j.id = $1 AND j.user_id = $2`;

const LANE_JOB = selectList(JOB_COLUMNS, LANE_JOB_KEYS);

/** Every statement on `jobs.jobs`. */
@Injectable()
export class JobsRepository {
  async insert(em: EntityManager, job: NewJob): Promise<void> {
    await em.createQueryBuilder().insert().into(JobEntity).values(job).updateEntity(false).execute();
  }

  /**
   * A start's job and its recipients in list order, in one statement (one round trip, and no lookup of
   * the job per recipient: the recipients have no foreign key); from COPY_RECIPIENTS_FROM recipients,
   * the job's row and then the recipients with COPY. `texts` empty when every recipient gets the job's
   * message; `variables` empty when none has any (else one entry per recipient, null for none).
   */
  async insertWithRecipients(
    em: EntityManager,
    job: NewJob,
    phones: readonly string[],
    texts: readonly string[],
    variables: readonly (Readonly<Record<string, string>> | null)[] = [],
  ): Promise<void> {
    const keys = (Object.keys(job) as (keyof NewJob & keyof typeof JOB_COLUMNS)[]).filter((k) => job[k] !== undefined);
    const values = keys.map((k) => job[k]);
    // The job's INSERT, its values numbered from $(first + 1).
    const insertJob = (first: number) =>
      `INSERT INTO jobs (${keys.map((k) => JOB_COLUMNS[k]).join(', ')})
       VALUES (${keys.map((_, i) => `$${i + first + 1}`).join(', ')})`;
    if (phones.length >= COPY_RECIPIENTS_FROM) {
      await rows(em, insertJob(0), values);
      await copyRecipients(em, job.id, phones, texts, variables);
      return;
    }
    await rows(
      em,
      `WITH job AS (${insertJob(3)}) ${insertRecipientsSql(`$${keys.indexOf('id') + 4}`, '$1', '$2', '$3')}`,
      [phones, textsParam(texts), variablesParam(variables), ...values],
    );
  }

  /** Jobs of the user a new job waits behind: queued, running, or paused by the policy (not scheduled, not paused by the user). */
  async countAhead(em: EntityManager, userId: string): Promise<number> {
    const found = await row<{ n: number }>(em, `SELECT ${countAheadSql('$1')} AS n`, [userId]);
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

  /** Waits: for the user (`user`, no end) or for its policy until `resumesAt`. */
  async pause(em: EntityManager, jobId: string, reason: PausedReason, resumesAt: Date | null): Promise<void> {
    await this.update(em, jobId, { status: 'paused', pausedReason: reason, resumesAt });
  }

  /** The user resumes: back to scheduled if its time has not come, else to where it was; the lane decides the rest. */
  async resume(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, {
      status: () =>
        `CASE WHEN start_at > now() THEN 'scheduled' WHEN started_at IS NULL THEN 'queued' ELSE 'running' END`,
      pausedReason: null,
      resumesAt: null,
    });
  }

  async complete(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, {
      status: 'completed',
      finishedAt: () => 'now()',
      pausedReason: null,
      resumesAt: null,
    });
  }

  async cancel(em: EntityManager, jobId: string): Promise<void> {
    await this.update(em, jobId, {
      status: 'cancelled',
      finishedAt: () => 'now()',
      pausedReason: null,
      resumesAt: null,
    });
  }

  async fail(em: EntityManager, jobId: string, reason: string): Promise<void> {
    await this.update(em, jobId, {
      status: 'failed',
      error: reason,
      finishedAt: () => 'now()',
      pausedReason: null,
      resumesAt: null,
    });
  }

  /**
   * `n` more recipients skipped (opted out or not on WhatsApp since the job was created). The
   * lane step completes the job itself when nothing is left to take, so the status is left alone here.
   */
  async countSkipped(em: EntityManager, jobId: string, n: number): Promise<LaneJob> {
    const job = await row<LaneJob>(em, `UPDATE jobs SET skipped = skipped + $2 WHERE id = $1 RETURNING ${LANE_JOB}`, [
      jobId,
      n,
    ]);
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
  markUnlinked(
    em: EntityManager,
    jobId: string,
  ): Promise<{ status: JobStatus; first: boolean; unlinkedMs: number } | undefined> {
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
