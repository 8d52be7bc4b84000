import { runService } from '@bns/service-kit';
import { JOBS_ENV, jobsEnvProblems, type JobsEnv } from './config/env.js';
import { CreateJobs1763769600000 } from './database/migrations/1763769600000-create-jobs.js';
import { JobsModule } from './jobs/jobs.module.js';

await runService({
  name: 'jobs',
  env: JOBS_ENV,
  defaultPort: 3002,
  natsHandlers: true,
  validate: (env) => jobsEnvProblems(env as unknown as JobsEnv),
  database: { schema: 'jobs', entities: [], migrations: [CreateJobs1763769600000] },
  module: () => JobsModule,
});
