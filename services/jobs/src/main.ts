import { runService } from '@bns/service-kit';
import { JOBS_ENV, jobsEnvProblems, type JobsEnv } from './config/env.js';
import { JOBS_ENTITIES, JOBS_MIGRATIONS, JOBS_SCHEMA } from './database/data-source.js';
import { JobsModule } from './jobs/jobs.module.js';
import { registerJobsMetrics } from './metrics/jobs.metrics.js';

await runService({
  name: 'jobs',
  env: JOBS_ENV,
  defaultPort: 3002,
  natsHandlers: true,
  validate: (env) => jobsEnvProblems(env as unknown as JobsEnv),
  database: { schema: JOBS_SCHEMA, entities: JOBS_ENTITIES, migrations: JOBS_MIGRATIONS },
  module: () => JobsModule,
  metrics: registerJobsMetrics,
});
