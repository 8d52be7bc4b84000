import { Module } from '@nestjs/common';
import { ContactsApiModule } from '../contacts/contacts-api.module.js';
import { JobStatusFastPathModule } from '../job-status-fast-path/index.js';
import { JobStarter } from './job-starter.js';
import { JobsApi } from './jobs.api.js';
import { JobsController } from './jobs.controller.js';
import { PolicyApi } from './policy.api.js';
import { PolicyController } from './policy.controller.js';
import { ResultsApi } from './results.api.js';
import { ResultsController } from './results.controller.js';

/**
 * /start-bulk-messages, /job-status, /job-logs, /cancel-job, /pause-job, /resume-job, /api/sending-policy, /api/sends-today,
 * and the campaign results calls (/job-results, /api/jobs), answered by the jobs service over NATS.
 * Job-status polls are answered by the fast path's JobStatusService (job-status-fast-path/).
 */
@Module({
  imports: [JobStatusFastPathModule, ContactsApiModule],
  controllers: [JobsController, PolicyController, ResultsController],
  providers: [JobStarter, JobsApi, PolicyApi, ResultsApi],
})
export class JobsApiModule {}
