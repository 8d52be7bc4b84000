import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows } from '@bns/service-kit';

/**
 * The INSERT of a job's recipients in list order: `jobId` the job's id, `phones` a text array of the
 * numbers and `texts` the JSON array `textsParam` makes (SQL parameters). Also run in one statement with
 * the job's own row (`JobsRepository.insertWithRecipients`).
 */
export const insertRecipientsSql = (jobId: string, phones: string, texts: string) =>
  `INSERT INTO job_recipients (job_id, seq, phone, text)
   SELECT ${jobId}, r.seq, r.phone, r.text
     FROM ROWS FROM (unnest(${phones}::text[]), json_array_elements_text(${texts}::json)) WITH ORDINALITY AS r(phone, text, seq)`;

/**
 * The recipients' own texts as one JSON array: serialised natively, where a text[] parameter is escaped
 * element by element. Empty when every recipient gets the job's message.
 */
export const textsParam = (texts: readonly string[]) => JSON.stringify(texts);

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
    await rows(em, insertRecipientsSql('$1', '$2', '$3'), [jobId, phones, textsParam(texts)]);
  }
}
