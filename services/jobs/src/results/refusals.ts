import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { JOB_MESSAGES, PACING_LOG, POLICY_LIMITS } from '@bns/contracts';
import type { OutboxRow } from '@bns/service-kit';
import { JobJournals } from '../events/job-journal.js';
import { progressOf } from '../store/job-progress.js';
import { RefusalsRepository } from './refusals.repository.js';

/** A send WhatsApp accepted and then refused (an error ack, no server ack in time), as sessions reported it. */
export interface RefusalFold {
  userId: string;
  jobId: string;
  phone: string;
  at: Date;
  /** Why, in plain words (the sessions service's text). */
  error: string;
}

/**
 * Accepted is not delivered: a refused send turns its recipient from sent to failed (the report, the
 * export and the job's counts follow), and refusals in a row to numbers the account never talked to
 * pause the account's campaigns until the user resumes them.
 */
@Injectable()
export class Refusals {
  constructor(
    private readonly repo: RefusalsRepository,
    private readonly journals: JobJournals,
  ) {}

  /** In the caller's transaction; answers the outbox rows to publish once it committed. */
  async apply(em: EntityManager, f: RefusalFold): Promise<OutboxRow[]> {
    const job = await this.repo.failSent(em, f.userId, f.jobId, f.phone, f.error);
    if (!job) return [];
    const journal = this.journals.open(em, f.userId);
    await journal.log(f.jobId, 'error', JOB_MESSAGES.messageFailed(f.phone, f.error));
    let paused = false;
    if (!(await this.repo.talkedBefore(em, f.userId, f.phone))) {
      const inRow = await this.repo.countRefusal(em, f.userId, f.at);
      if (inRow >= POLICY_LIMITS.refusalsToNewContactsPause) {
        for (const p of await this.repo.pauseOpenJobs(em, f.userId)) {
          await journal.log(p.id, 'warning', PACING_LOG.refusingNewContacts(inRow));
          journal.progress(p.id, p.status, progressOf(p));
          if (p.id === job.id) paused = true;
        }
        // A resume starts a new row: two more refusals pause again.
        await this.repo.resetStreak(em, f.userId);
      }
    }
    if (!paused) journal.progress(job.id, job.status, progressOf(job));
    return journal.commit();
  }

  /** Delivered receipts end their accounts' rows of refusals. */
  endStreaks(em: EntityManager, delivered: readonly { userId: string; at: Date }[]): Promise<void> {
    return this.repo.endStreaks(em, delivered);
  }
}
