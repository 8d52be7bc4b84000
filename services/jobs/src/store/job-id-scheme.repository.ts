import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JobIdScheme } from '@bns/service-kit';
import { JobIdSchemeEntity } from './job-id-scheme.entity.js';

/** The one row of `jobs.job_id_scheme` (made by its migration). */
@Injectable()
export class JobIdSchemeRepository {
  async read(em: EntityManager): Promise<JobIdScheme> {
    const row = await em.getRepository(JobIdSchemeEntity).findOneByOrFail({ id: 1 });
    return { key: row.key, legacyIds: row.legacyIds };
  }
}
