import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { copyRows, rows } from '@bns/service-kit';

/**
 * The INSERT of a job's recipients in list order: `jobId` the job's id, `phones` a text array of the
 * numbers, `texts` the JSON array `textsParam` makes and `variables` the one `variablesParam` makes (SQL
 * parameters). Also run in one statement with the job's own row (`JobsRepository.insertWithRecipients`).
 * The variables are read as `json` and each recipient's turned into `jsonb` on its own: parsing the
 * whole array as `jsonb` first builds a second copy of it (a 50,000-row start's is 3 MB).
 */
export const insertRecipientsSql = (jobId: string, phones: string, texts: string, variables: string) =>
  `INSERT INTO job_recipients (job_id, seq, phone, text, variables)
   SELECT ${jobId}, r.seq, r.phone, r.text, CASE WHEN json_typeof(r.variables) = 'object' THEN r.variables::jsonb END
     FROM ROWS FROM (unnest(${phones}::text[]), json_array_elements_text(${texts}::json), json_array_elements(${variables}::json))
          WITH ORDINALITY AS r(phone, text, variables, seq)`;

/**
 * From this many recipients a start stores them with COPY (`copyRecipients`), a statement after the
 * job's own row; fewer go in the job's INSERT statement (one round trip). For 50,000 personalised
 * recipients Postgres took about 550 ms to unpack the INSERT's JSON parameters and store them, and
 * about 400 ms to read the same rows as COPY text.
 */
export const COPY_RECIPIENTS_FROM = 1000;

/**
 * A job's recipients with COPY, in list order (`seq` from 1): `texts` and `variables` empty when no
 * recipient has its own (else one entry each, null for a recipient without variables).
 */
export function copyRecipients(
  em: EntityManager,
  jobId: string,
  phones: readonly string[],
  texts: readonly string[],
  variables: readonly (Readonly<Record<string, string>> | null)[],
): Promise<void> {
  return copyRows(em, 'job_recipients', ['job_id', 'seq', 'phone', 'text', 'variables'], phones.length, (i) => {
    const own = variables[i];
    return [jobId, i + 1, phones[i]!, texts[i] ?? null, own ? JSON.stringify(own) : null];
  });
}

/**
 * The recipients' own texts as one JSON array: serialised natively, where a text[] parameter is escaped
 * element by element. Empty when every recipient gets the job's message.
 */
export const textsParam = (texts: readonly string[]) => JSON.stringify(texts);

/** The recipients' variables as one JSON array (null for a recipient without); empty when none has any. */
export const variablesParam = (variables: readonly (Readonly<Record<string, string>> | null)[]) =>
  JSON.stringify(variables);

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
    await rows(em, insertRecipientsSql('$1', '$2', '$3', '$4'), [jobId, phones, textsParam(texts), variablesParam([])]);
  }
}
