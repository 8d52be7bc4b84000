import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows } from '@bns/service-kit';

/**
 * The job's recipients as its start stores them. What becomes of each (taken, sent, failed, retried,
 * skipped) is the lane step's: `LaneStepRepository`.
 */
@Injectable()
export class RecipientsRepository {
  /** The job's recipients in list order; `texts` empty when every recipient gets the job's message. */
  async insertAll(
    em: EntityManager,
    jobId: string,
    phones: readonly string[],
    texts: readonly string[],
  ): Promise<void> {
    await rows(
      em,
      // The texts as one JSON array: serialised natively, where a text[] parameter is escaped element by element.
      `INSERT INTO job_recipients (job_id, seq, phone, text)
       SELECT $1, r.seq, r.phone, r.text
         FROM ROWS FROM (unnest($2::text[]), json_array_elements_text($3::json)) WITH ORDINALITY AS r(phone, text, seq)`,
      [jobId, phones, JSON.stringify(texts)],
    );
  }
}
