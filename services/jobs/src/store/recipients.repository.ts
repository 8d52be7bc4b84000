import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { inInputOrder, rows } from '@bns/service-kit';
import { sendableSql } from '../optouts/opt-outs.repository.js';
import { bookLanesSql } from '../queue/lane.repository.js';
import { inFlightSql, waitingSql } from './recipient-state.sql.js';
import type { JobRecipientEntity } from './job-recipient.entity.js';
import { STEP_PREPARED } from '../queue/step-planning.js';

/** The next recipient to send to, with the text it receives. */
export type OpenRecipient = Pick<JobRecipientEntity, 'seq' | 'phone' | 'attempts' | 'state'> & {
  text: string;
  /** Pending recipients before it were passed over: the account must not send to them (opted out, not on WhatsApp). */
  passedOver: boolean;
};

/** One take of `takeFirstOpenMany`: the job, its message (for recipients without a text of their own), its user and the pace to book. */
export interface RecipientTake {
  jobId: string;
  message: string;
  userId: string;
  paceMs: number;
}

/**
 * Every statement on `jobs.job_recipients`. Outcome updates apply only to a recipient still in flight,
 * so a worker that lost its lane cannot record over the one that took it; each says whether it applied.
 */
@Injectable()
export class RecipientsRepository {
  /** The job's recipients in list order; `texts` empty when every recipient gets the job's message. */
  async insertAll(em: EntityManager, jobId: string, phones: readonly string[], texts: readonly string[]): Promise<void> {
    await rows(
      em,
      `INSERT INTO job_recipients (job_id, seq, phone, text)
       SELECT $1, r.seq, r.phone, r.text FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS r(phone, text, seq)`,
      [jobId, phones, texts],
    );
  }

  /**
   * For each take of a batch of lane steps, in one statement: the job's first recipient not done yet,
   * in list order, marked `sending`, and the user's lane booked for its next slot `paceMs` after this
   * one. Its `state` is what it was before (`sending` = left by a worker that died mid-send: it goes out
   * again with the same key). A pending recipient the account must not send to (opted out, or not on
   * WhatsApp within `notOnWhatsAppDays`) is passed over, so one who opted out a moment ago is
   * never taken; `passedOver` says some were, so the caller moves them to the job's skips. Answers in
   * the order of `takes`; undefined where the job has nobody left to send to (the lane is not booked).
   */
  async takeFirstOpenMany(em: EntityManager, takes: RecipientTake[], notOnWhatsAppDays: number): Promise<Array<OpenRecipient | undefined>> {
    const found = await rows<OpenRecipient & { i: string }>(
      em,
      `WITH req AS (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::float8[]) WITH ORDINALITY AS r(p_job_id, p_message, p_user_id, p_pace, p_i)
       ), pick AS (
         SELECT req.*, x.seq, x.state FROM req
          CROSS JOIN LATERAL (
            SELECT seq, CASE WHEN ${inFlightSql('job_recipients')} THEN 'sending' ELSE state END AS state FROM job_recipients
             WHERE job_id = req.p_job_id AND state IN ('pending', 'sending')
               AND ${sendableSql('job_recipients.phone', inFlightSql('job_recipients'), 'req.p_user_id', '$5')}
             ORDER BY seq LIMIT 1) x
       ), taken AS (
         UPDATE job_recipients t SET state = 'pending', in_flight = true, next_attempt_at = NULL FROM pick
          WHERE t.job_id = pick.p_job_id AND t.seq = pick.seq
          RETURNING pick.p_i AS i, pick.p_user_id, pick.p_pace, t.seq, t.phone, coalesce(t.text, pick.p_message) AS text, t.attempts, pick.state,
                    EXISTS (SELECT 1 FROM job_recipients o WHERE o.job_id = pick.p_job_id AND ${waitingSql('o')} AND o.seq < pick.seq) AS "passedOver"
       ), booked AS (${bookLanesSql('taken', 'taken.p_user_id', 'taken.p_pace')})
       SELECT i, seq, phone, text, attempts, state, "passedOver" FROM taken`,
      [takes.map((t) => t.jobId), takes.map((t) => t.message), takes.map((t) => t.userId), takes.map((t) => t.paceMs / 1000), notOnWhatsAppDays],
      STEP_PREPARED,
    );
    return inInputOrder(found, takes.length).map((f) => {
      if (!f) return undefined;
      const { i: _i, ...recipient } = f;
      return recipient;
    });
  }

  async markSending(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(em, `UPDATE job_recipients SET state = 'pending', in_flight = true, next_attempt_at = NULL WHERE job_id = $1 AND seq = $2`, [jobId, seq]);
  }

  /** `pacedMs`: the gap planned after this message. The lane records outcomes with `LaneRepository.recordSentMany` and `JobsRepository.recordFailed`. */
  async markSent(em: EntityManager, jobId: string, seq: number, at: Date, pacedMs: number | null = null): Promise<boolean> {
    const done = await rows(
      em,
      `UPDATE job_recipients r SET state = 'sent', in_flight = false, done_at = $3, error = NULL, paced_ms = $4
        WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r')} RETURNING 1`,
      [jobId, seq, at, pacedMs],
    );
    return done.length > 0;
  }

  /** A temporary failure: back to pending with one more attempt, not before `afterMs`. */
  async retryLater(em: EntityManager, jobId: string, seq: number, error: string, afterMs: number): Promise<boolean> {
    const back = await rows(
      em,
      `UPDATE job_recipients r SET state = 'pending', in_flight = false, attempts = attempts + 1, error = $3,
              next_attempt_at = now() + make_interval(secs => $4)
        WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r')} RETURNING 1`,
      [jobId, seq, error, afterMs / 1000],
    );
    return back.length > 0;
  }

  /** Back to pending without using an attempt (the account, not the number, was the problem). */
  async release(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(em, `UPDATE job_recipients r SET state = 'pending', in_flight = false WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r')}`, [jobId, seq]);
  }
}
