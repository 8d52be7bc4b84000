import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  CAPPED_JOB_STATUSES,
  RESULTS_LIMITS,
  type JobAttachment,
  type RecipientReply,
  type RecipientResultStatus,
} from '@bns/contracts';
import { row, rows } from '@bns/service-kit';
import type { JobEntity } from '../store/job.entity.js';
import type { JobReceiptsEntity } from './job-receipts.entity.js';

/** One recipient as the report reads it. */
export interface ReportRow {
  seq: number;
  phone: string;
  status: RecipientResultStatus;
  error: string | null;
  doneAt: Date | null;
  variables: Record<string, string> | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  repliedAt: Date | null;
  /** The newest replies (RESULTS_LIMITS.repliesPerRecipientMax), oldest first; null when none. */
  replies: RecipientReply[] | null;
}

export type HistoryRow = Pick<
  JobEntity,
  'id' | 'status' | 'total' | 'sent' | 'failed' | 'skipped' | 'createdAt' | 'startedAt' | 'finishedAt'
> &
  Pick<JobReceiptsEntity, 'delivered' | 'read' | 'replied'> &
  Pick<JobEntity, 'message'> & {
    preview: string;
    personalised: boolean;
    attachment: JobAttachment | null;
    detailsPurgedAfterDays: number | null;
  };

/** A receipt to fold: which recipient (by job and number) and what happened when. */
export interface ReceiptFold {
  userId: string;
  jobId: string;
  phone: string;
  kind: 'delivered' | 'read';
  at: Date;
}

/** What one fold changed (each time is set once, so a repeat changes nothing). */
export interface FoldDelta {
  jobId: string;
  delivered: number;
  read: number;
  replied: number;
}

/**
 * The status the report shows, from the recipient's state and its receipts: the furthest it got.
 * `skipped` comes with the opt-out list (a recipient that was never sent to on purpose).
 */
const STATUS_SQL = `CASE WHEN r.replied_at IS NOT NULL THEN 'replied'
     WHEN r.read_at IS NOT NULL THEN 'read'
     WHEN r.delivered_at IS NOT NULL THEN 'delivered'
     WHEN r.state = 'sent' THEN 'sent'
     WHEN r.state = 'failed' THEN 'failed'
     WHEN r.state = 'skipped' THEN 'skipped'
     ELSE 'pending' END`;

/**
 * A recipient's newest replies as a JSON list, oldest first: looked up only for a recipient that replied
 * (one index probe each), so a page of a campaign nobody answered reads nothing more.
 */
const REPLIES_SQL = `CASE WHEN r.replied_at IS NOT NULL THEN (
         SELECT jsonb_agg(jsonb_build_object('text', x.text, 'at', to_char(x.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY x.at, x.reply_id)
           FROM (SELECT p.text, p.at, p.reply_id FROM recipient_replies p WHERE p.job_id = r.job_id AND p.seq = r.seq
                  ORDER BY p.at DESC, p.reply_id DESC LIMIT ${RESULTS_LIMITS.repliesPerRecipientMax}) x) END`;

const REPORT_SELECT = `SELECT r.seq, r.phone, ${STATUS_SQL} AS status, r.error, r.done_at AS "doneAt", r.variables,
       r.delivered_at AS "deliveredAt", r.read_at AS "readAt", r.replied_at AS "repliedAt", ${REPLIES_SQL} AS replies
  FROM job_recipients r`;

/** Report positions of skipped recipients start here: after any list a job can have (≤ 50,000 rows). */
const SKIPPED_SEQ_BASE = 1_000_000_000;

const CAPPED = `(${CAPPED_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/**
 * Every statement of campaign results: the report, the export's columns, the history
 * and the receipts folded in from events.
 */
@Injectable()
export class ResultsRepository {
  // ---- the report ----

  /** The job's owner check and what the report needs of it. */
  findJob(
    em: EntityManager,
    userId: string,
    jobId: string,
  ): Promise<(Pick<JobEntity, 'id' | 'status' | 'createdAt'> & { preview: string }) | undefined> {
    return row(
      em,
      `SELECT id, status, created_at AS "createdAt", left(message, 200) AS preview FROM jobs WHERE id = $1 AND user_id = $2`,
      [jobId, userId],
    );
  }

  /**
   * Recipients after `afterSeq` in list order, optionally only those in `statuses`, at most `limit`.
   * Recipients the opt-out list skipped (never queued, or taken out of the queue mid-job) live
   * in `job_skips`; they follow the list, numbered from SKIPPED_SEQ_BASE in the order they were skipped,
   * so every recipient is on exactly one page. `search` (digits) keeps only the numbers holding it.
   */
  page(
    em: EntityManager,
    jobId: string,
    afterSeq: number,
    limit: number,
    statuses?: readonly RecipientResultStatus[],
    search?: string,
  ): Promise<ReportRow[]> {
    const params: unknown[] = [jobId, afterSeq, limit];
    const param = (value: unknown) => `$${params.push(value)}`;
    const filtered = statuses && statuses.length > 0;
    const wantSkipped = !filtered || statuses.includes('skipped');
    const byStatus = filtered ? `AND ${STATUS_SQL} = ANY(${param(statuses)}::text[])` : '';
    // Digits anywhere in the number: a job's rows are read by its key range, so this scans one job at most.
    const found = search ? param(search) : undefined;
    const queued = `${REPORT_SELECT} WHERE r.job_id = $1 AND r.seq > $2 ${byStatus} ${found ? `AND strpos(r.phone, ${found}::text) > 0` : ''}`;
    const skipped = `SELECT s.seq, s.phone, 'skipped' AS status, s.reason AS error, s.at AS "doneAt", s.variables,
            NULL::timestamptz AS "deliveredAt", NULL::timestamptz AS "readAt", NULL::timestamptz AS "repliedAt", NULL::jsonb AS replies
       FROM (SELECT (${SKIPPED_SEQ_BASE} + row_number() OVER (ORDER BY at, phone))::int AS seq, phone, reason, at, variables FROM job_skips WHERE job_id = $1) s
      WHERE s.seq > $2 ${found ? `AND strpos(s.phone, ${found}::text) > 0` : ''}`;
    return rows<ReportRow>(
      em,
      `${wantSkipped ? `(${queued}) UNION ALL (${skipped})` : queued} ORDER BY seq LIMIT $3`,
      params,
    );
  }

  /** Names of the variables a job's recipients carry (the export's extra columns), sorted. */
  async variableNames(em: EntityManager, jobId: string, max: number): Promise<string[]> {
    const found = await rows<{ name: string }>(
      em,
      `SELECT DISTINCT jsonb_object_keys(v.variables) AS name
         FROM (SELECT variables FROM job_recipients WHERE job_id = $1 AND variables IS NOT NULL
               UNION ALL SELECT variables FROM job_skips WHERE job_id = $1 AND variables IS NOT NULL) v
        ORDER BY name LIMIT $2`,
      [jobId, max],
    );
    return found.map((f) => f.name);
  }

  // ---- the history ----

  /** The user's jobs (only those not finished yet with `active`), newest first, after the job `afterJobId` (keyset on created_at, id). */
  history(
    em: EntityManager,
    userId: string,
    limit: number,
    afterJobId: string | undefined,
    previewMax: number,
    active = false,
  ): Promise<HistoryRow[]> {
    const after = afterJobId
      ? `AND (j.created_at, j.id) < (SELECT c.created_at, c.id FROM jobs c WHERE c.id = $4 AND c.user_id = $1)`
      : '';
    return rows<HistoryRow>(
      em,
      `SELECT j.id, j.status, j.total, j.sent, j.failed, j.skipped, j.created_at AS "createdAt", j.started_at AS "startedAt",
              j.finished_at AS "finishedAt", j.message, left(j.message, $3) AS preview,
              coalesce(c.delivered, 0) AS delivered, coalesce(c.read, 0) AS read, coalesce(c.replied, 0) AS replied,
              j.personalised,
              CASE WHEN j.media IS NOT NULL THEN jsonb_build_object('mediaId', j.media->'mediaId', 'kind', j.media->'kind', 'fileName',
                j.media->'fileName', 'size', j.media->'size') END AS attachment,
              j.details_purged_after_days AS "detailsPurgedAfterDays"
         FROM jobs j LEFT JOIN job_receipts c ON c.job_id = j.id
        WHERE j.user_id = $1 ${after} ${active ? `AND j.status IN ${CAPPED}` : ''}
        ORDER BY j.created_at DESC, j.id DESC LIMIT $2`,
      afterJobId ? [userId, limit, previewMax, afterJobId] : [userId, limit, previewMax],
    );
  }

  /** The file name of the job's attachment; null for a text-only job. */
  async attachmentName(em: EntityManager, jobId: string): Promise<string | null> {
    const found = await row<{ fileName: string | null }>(
      em,
      `SELECT media->>'fileName' AS "fileName" FROM jobs WHERE id = $1`,
      [jobId],
    );
    return found?.fileName ?? null;
  }

  /** Whether `jobId` is a job of the user (a history cursor must be one). */
  async ownsJob(em: EntityManager, userId: string, jobId: string): Promise<boolean> {
    return (await row(em, `SELECT 1 FROM jobs WHERE id = $1 AND user_id = $2`, [jobId, userId])) !== undefined;
  }

  // ---- receipts ----

  /**
   * Folds a delivered or read receipt into the recipient's row (a read implies delivered). Each time
   * is set only when it is still empty, so a redelivered or late duplicate changes nothing; returns
   * what changed, for the job's counts. Unknown or foreign recipients change nothing (undefined).
   */
  async foldReceipt(em: EntityManager, r: ReceiptFold): Promise<FoldDelta | undefined> {
    const [delta] = await this.foldReceipts(em, [r]);
    if (delta) return delta;
    const known = await row(
      em,
      `SELECT 1 FROM job_recipients x JOIN jobs j ON j.id = x.job_id WHERE x.job_id = $1 AND x.phone = $2 AND j.user_id = $3`,
      [r.jobId, r.phone, r.userId],
    );
    return known ? { jobId: r.jobId, delivered: 0, read: 0, replied: 0 } : undefined;
  }

  /**
   * Folds many delivered/read receipts at once (one statement per batch, not per receipt). A recipient's receipts in the batch count as
   * one fold: delivered at the earliest of them, read at the earliest read. Unknown or foreign
   * recipients (not of that user's job) change nothing. The times are columns of the recipient's row
   * that no index holds, so a fold is a HOT update, and each statement sets one time only where it is
   * still empty: a concurrent fold of the same recipient (another replica, a redelivery) that set it
   * first makes the row fail that condition when it is checked again after the wait, so every time is
   * counted once. A read implies delivered, so a row not delivered yet has no read either:
   *   1. recipients not delivered yet get their delivered time, and their read time when the batch has one;
   *   2. (only when the batch has reads) recipients delivered before but not read yet get their read time.
   */
  async foldReceipts(em: EntityManager, receipts: readonly ReceiptFold[]): Promise<FoldDelta[]> {
    if (receipts.length === 0) return [];
    const params = [
      receipts.map((r) => r.jobId),
      receipts.map((r) => r.userId),
      receipts.map((r) => r.phone),
      receipts.map((r) => r.at),
      receipts.map((r) => r.kind === 'read'),
    ];
    const folds = `SELECT i.job_id, i.phone, min(i.at) AS d_at, min(i.at) FILTER (WHERE i.is_read) AS r_at
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::boolean[]) AS i(job_id, user_id, phone, at, is_read)
         JOIN jobs j ON j.id = i.job_id AND j.user_id = i.user_id
        GROUP BY i.job_id, i.phone ORDER BY i.job_id, i.phone`;
    const delivered = await rows<{ jobId: string; read: boolean }>(
      em,
      `UPDATE job_recipients x SET delivered_at = f.d_at, read_at = f.r_at
         FROM (${folds}) f
        WHERE x.job_id = f.job_id AND x.phone = f.phone AND x.delivered_at IS NULL
       RETURNING x.job_id AS "jobId", x.read_at IS NOT NULL AS read`,
      params,
    );
    const deltas: FoldDelta[] = delivered.map((d) => ({
      jobId: d.jobId,
      delivered: 1,
      read: d.read ? 1 : 0,
      replied: 0,
    }));
    if (!receipts.some((r) => r.kind === 'read')) return deltas;
    const read = await rows<{ jobId: string }>(
      em,
      `UPDATE job_recipients x SET read_at = f.r_at
         FROM (${folds}) f
        WHERE x.job_id = f.job_id AND x.phone = f.phone AND f.r_at IS NOT NULL AND x.read_at IS NULL
       RETURNING x.job_id AS "jobId"`,
      params,
    );
    return [...deltas, ...read.map((r) => ({ jobId: r.jobId, delivered: 0, read: 1, replied: 0 }))];
  }

  /**
   * Folds a reply into the newest message sent to that number by that user at or before the reply
   * (a reply means it was delivered and read, too), and keeps its text on that recipient when given
   * (once per reply id, so a redelivered event is one reply).
   */
  async foldReply(
    em: EntityManager,
    userId: string,
    phone: string,
    at: Date,
    reply?: { id: string; text: string },
  ): Promise<FoldDelta | undefined> {
    const target = await row<{ jobId: string; seq: number }>(
      em,
      `SELECT r.job_id AS "jobId", r.seq FROM job_recipients r JOIN jobs j ON j.id = r.job_id
        WHERE r.phone = $2 AND r.state = 'sent' AND j.user_id = $1 AND r.done_at <= $3
        ORDER BY r.done_at DESC LIMIT 1`,
      [userId, phone, at],
    );
    if (!target) return undefined;
    if (reply) {
      await rows(
        em,
        `INSERT INTO recipient_replies (job_id, seq, reply_id, at, text) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (job_id, seq, reply_id) DO NOTHING`,
        [target.jobId, target.seq, reply.id, at, reply.text.replaceAll('\u0000', '')],
      );
    }
    return this.setTimes(em, target.jobId, target.seq, at, true, true);
  }

  /** Adds what folds changed to the jobs' counts. */
  async addCounts(em: EntityManager, deltas: readonly FoldDelta[]): Promise<void> {
    const changed = deltas.filter((d) => d.delivered + d.read + d.replied > 0);
    if (changed.length === 0) return;
    await rows(
      em,
      // One row per job: a batch holds many receipts of one job, and ON CONFLICT may touch a row only once.
      `INSERT INTO job_receipts (job_id, delivered, read, replied)
       SELECT job_id, sum(delivered)::int, sum(read)::int, sum(replied)::int
         FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[]) AS d(job_id, delivered, read, replied)
        GROUP BY job_id ORDER BY job_id
       ON CONFLICT (job_id) DO UPDATE SET delivered = job_receipts.delivered + excluded.delivered,
              read = job_receipts.read + excluded.read, replied = job_receipts.replied + excluded.replied`,
      [
        changed.map((d) => d.jobId),
        changed.map((d) => d.delivered),
        changed.map((d) => d.read),
        changed.map((d) => d.replied),
      ],
    );
  }

  /**
   * Sets the receipt times still empty, in one statement: the row is locked (a concurrent fold of the
   * same recipient, e.g. on another replica, waits and then sees the other's times), and only what
   * was still empty counts.
   */
  private async setTimes(
    em: EntityManager,
    jobId: string,
    seq: number,
    at: Date,
    read: boolean,
    replied: boolean,
  ): Promise<FoldDelta> {
    const before = await row<{ d: boolean; r: boolean; p: boolean }>(
      em,
      `UPDATE job_recipients x SET delivered_at = coalesce(x.delivered_at, $3),
              read_at = CASE WHEN $4 THEN coalesce(x.read_at, $3) ELSE x.read_at END,
              replied_at = CASE WHEN $5 THEN coalesce(x.replied_at, $3) ELSE x.replied_at END
         FROM (SELECT delivered_at IS NOT NULL AS d, read_at IS NOT NULL AS r, replied_at IS NOT NULL AS p
                 FROM job_recipients WHERE job_id = $1 AND seq = $2 FOR NO KEY UPDATE) old
        WHERE x.job_id = $1 AND x.seq = $2 AND (NOT old.d OR ($4 AND NOT old.r) OR ($5 AND NOT old.p))
        RETURNING old.d, old.r, old.p`,
      [jobId, seq, at, read, replied],
    );
    // No row back: nothing was still empty, nothing changed.
    if (!before) return { jobId, delivered: 0, read: 0, replied: 0 };
    return {
      jobId,
      delivered: before.d ? 0 : 1,
      read: read && !before.r ? 1 : 0,
      replied: replied && !before.p ? 1 : 0,
    };
  }
}
