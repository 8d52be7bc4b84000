import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { loadEnv, mintJobId, openDatabase, SERVICE_ENV, Transactions } from '@bns/service-kit';
import { startPostgres, type Postgres } from '@bns/testing';
import { JOBS_ENV, type JobsEnv } from '../config/env.js';
import { JOBS_ENTITIES, JOBS_MIGRATIONS, JOBS_SCHEMA } from '../database/data-source.js';
import { JobJournals, JournalWriter } from '../events/job-journal.js';
import { JOBS_REPOSITORIES } from '../jobs/jobs.module.js';
import { JobIdSchemeRepository } from '../store/job-id-scheme.repository.js';
import { JobsRepository } from '../store/jobs.repository.js';
import { Policies } from '../policy/policy.service.js';
import { RecipientsRepository } from '../store/recipients.repository.js';
import { LANE_QUEUE_PROVIDERS } from '../queue/lane-queue.js';
import { LaneRepository } from '../queue/lane.repository.js';

/**
 * The jobs service's data layer in-process: a real private Postgres with the service's migrations and
 * entities, the repositories and the lane queue from Nest DI; no NATS, no build, no spawned services.
 */
export interface InProcess {
  pg: Postgres;
  db: DataSource;
  module: TestingModule;
  env: JobsEnv;
  get<T>(type: new (...args: never[]) => T): T;
  /**
   * Stores a queued job for `userId` with these numbers and activates the lane, as a start does;
   * `beforeCommit` runs inside that transaction, after the writes (to hold the lane's lock a while).
   */
  seedJob(
    userId: string,
    phones: string[],
    message?: string,
    startAt?: Date,
    beforeCommit?: () => Promise<void>,
  ): Promise<string>;
  /** Gives a seeded job's recipients these variables (by list position) and marks it personalised. */
  seedVariables(jobId: string, variables: readonly Record<string, string | undefined>[]): Promise<void>;
  close(): Promise<void>;
}

export async function startInProcess(
  envOverrides: Record<string, string> = {},
  extraProviders: unknown[] = [],
): Promise<InProcess> {
  const pg = await startPostgres();
  const db = await openDatabase({
    url: pg.url,
    schema: JOBS_SCHEMA,
    entities: JOBS_ENTITIES,
    migrations: JOBS_MIGRATIONS,
    poolSize: 10,
  });
  const env = { ...loadEnv(JOBS_ENV, envOverrides), RPC_TIMEOUT_MS: 2000 } as JobsEnv;
  const module = await Test.createTestingModule({
    providers: [
      { provide: DataSource, useValue: db },
      { provide: Transactions, useValue: new Transactions(db) },
      { provide: SERVICE_ENV, useValue: env },
      ...JOBS_REPOSITORIES,
      Policies,
      JournalWriter,
      JobJournals,
      ...LANE_QUEUE_PROVIDERS,
      ...(extraProviders as never[]),
    ],
  }).compile();
  const get = <T>(type: new (...args: never[]) => T): T => module.get(type);
  return {
    pg,
    db,
    module,
    env,
    get,
    async seedJob(userId, phones, message = 'Hello', startAt, beforeCommit) {
      const jobId = mintJobId((await get(JobIdSchemeRepository).read(db.manager)).key, userId);
      await get(Transactions).run(async (em) => {
        await get(LaneRepository).activate(em, userId, startAt);
        await get(JobsRepository).insert(em, {
          id: jobId,
          userId,
          clientId: null,
          message,
          total: phones.length,
          delayMs: env.SEND_DELAY_MS,
          estimatedMinutes: 0,
          status: startAt ? 'scheduled' : 'queued',
          startAt: startAt ?? null,
          estimatedFinishAt: null,
        });
        await get(RecipientsRepository).insertAll(em, jobId, phones, []);
        await beforeCommit?.();
      });
      return jobId;
    },
    async seedVariables(jobId, variables) {
      await db.query(
        `UPDATE jobs.job_recipients r SET variables = v.value
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS v(value, seq)
          WHERE r.job_id = $1 AND r.seq = v.seq`,
        [jobId, JSON.stringify(variables)],
      );
      await db.query(`UPDATE jobs.jobs SET personalised = true WHERE id = $1`, [jobId]);
    },
    async close() {
      await module.close();
      await db.destroy();
      await pg.stop();
    },
  };
}
