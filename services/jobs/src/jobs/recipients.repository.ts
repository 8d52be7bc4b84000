import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { row, rows } from '@bns/service-kit';
import { sendableSql } from '../optouts/opt-outs.repository.js';
import { bookLaneSql } from '../queue/lane.repository.js';
import type { JobRecipientEntity } from './job-recipient.entity.js';

/** The next recipient to send to, with the text it receives. */
export type OpenRecipient = Pick<JobRecipientEntity, 'seq' | 'phone' | 'attempts' | 'state'> & {
  text: string;
  /** Pending recipients before it were passed over: the account must not send to them (opted out, not on WhatsApp). */
  passedOver: boolean;
};

/**
 * Every statement on `jobs.job_recipients`. Outcome updates apply only to a recipient still `sending`,
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
   * The job's first recipient not done yet, in list order, marked `sending` in the same statement; its
   * `state` is what it was before (`sending` = left by a worker that died mid-send: it goes out again
   * with the same key). A pending recipient the account must not send to (opted out, or not on
   * WhatsApp within the memory window: issue 13) is passed over, so one who opted out a moment ago is
   * never taken; `passedOver` says some were, so the caller moves them to the job's skips.
   */
  takeFirstOpen(
    em: EntityManager,
    jobId: string,
    jobMessage: string,
    sendableFor: { userId: string; notOnWhatsAppDays: number },
    book?: { paceMs: number },
  ): Promise<OpenRecipient | undefined> {
    // With `book`, the lane's next slot is booked in the same statement when a recipient was taken.
    return row<OpenRecipient>(
      em,
      `WITH pick AS (
         SELECT seq, state FROM job_recipients
          WHERE job_id = $1 AND state IN ('pending', 'sending')
            AND ${sendableSql('job_recipients.phone', 'job_recipients.state', '$3', '$4')}
          ORDER BY seq LIMIT 1
       ), taken AS (
         UPDATE job_recipients r SET state = 'sending', next_attempt_at = NULL FROM pick
          WHERE r.job_id = $1 AND r.seq = pick.seq
          RETURNING r.seq, r.phone, coalesce(r.text, $2) AS text, r.attempts, pick.state,
                    EXISTS (SELECT 1 FROM job_recipients o WHERE o.job_id = $1 AND o.state = 'pending' AND o.seq < pick.seq) AS "passedOver"
       ), booked AS (${bookLaneSql('$3', '$5::float8', '$5::float8 IS NOT NULL AND EXISTS (SELECT 1 FROM taken)')})
       SELECT * FROM taken`,
      [jobId, jobMessage, sendableFor.userId, sendableFor.notOnWhatsAppDays, book ? book.paceMs / 1000 : null],
    );
  }

  async markSending(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(em, `UPDATE job_recipients SET state = 'sending', next_attempt_at = NULL WHERE job_id = $1 AND seq = $2`, [jobId, seq]);
  }

  /** `pacedMs`: the gap planned after this message. The lane records outcomes with `JobsRepository.recordOutcome`. */
  async markSent(em: EntityManager, jobId: string, seq: number, at: Date, pacedMs: number | null = null): Promise<boolean> {
    const done = await rows(
      em,
      `UPDATE job_recipients SET state = 'sent', done_at = $3, error = NULL, paced_ms = $4
        WHERE job_id = $1 AND seq = $2 AND state = 'sending' RETURNING 1`,
      [jobId, seq, at, pacedMs],
    );
    return done.length > 0;
  }

  /** A temporary failure: back to pending with one more attempt, not before `afterMs`. */
  async retryLater(em: EntityManager, jobId: string, seq: number, error: string, afterMs: number): Promise<boolean> {
    const back = await rows(
      em,
      `UPDATE job_recipients SET state = 'pending', attempts = attempts + 1, error = $3,
              next_attempt_at = now() + make_interval(secs => $4)
        WHERE job_id = $1 AND seq = $2 AND state = 'sending' RETURNING 1`,
      [jobId, seq, error, afterMs / 1000],
    );
    return back.length > 0;
  }

  /** Back to pending without using an attempt (the account, not the number, was the problem). */
  async release(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(em, `UPDATE job_recipients SET state = 'pending' WHERE job_id = $1 AND seq = $2 AND state = 'sending'`, [jobId, seq]);
  }
}
