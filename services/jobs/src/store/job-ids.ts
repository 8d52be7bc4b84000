import { Injectable } from '@nestjs/common';
import { mintJobId, Transactions, type JobIdScheme } from '@bns/service-kit';
import { JobIdSchemeRepository } from './job-id-scheme.repository.js';

/**
 * The job id scheme of this deployment (service-kit `JobIdScheme`): read from the schema once, then
 * held. New job ids are minted with it; the gateway asks for it (`jobs.idScheme`).
 */
@Injectable()
export class JobIds {
  private loading?: Promise<JobIdScheme>;

  constructor(
    private readonly tx: Transactions,
    private readonly repository: JobIdSchemeRepository,
  ) {}

  scheme(): Promise<JobIdScheme> {
    // A failed read (Postgres away) is not kept: the next call reads again.
    this.loading ??= this.repository.read(this.tx.manager).catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  /** A new id for a job of `userId`. */
  async mint(userId: string): Promise<string> {
    return mintJobId((await this.scheme()).key, userId);
  }
}
