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
      `INSERT INTO job_recipients (job_id, seq, phone, text)
       SELECT $1, r.seq, r.phone, r.text FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS r(phone, text, seq)`,
      [jobId, phones, texts],
    );
  }
}
