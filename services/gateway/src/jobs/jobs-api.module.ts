import { Module } from '@nestjs/common';
import { JobIdCheck } from './job-id-check.js';
import { JobStarter } from './job-starter.js';
import { JobStatusCache, JobStatusRefresher } from './job-status-cache.js';
import { JobsController } from './jobs.controller.js';
import { PolicyController } from './policy.controller.js';
import { ResultsController } from './results.controller.js';

/**
 * /start-bulk-messages, /job-status, /job-logs, /cancel-job, /pause-job, /resume-job, /api/sending-policy,
 * and the campaign results calls (/job-results, /api/jobs), answered by the jobs service over NATS.
 */
@Module({ controllers: [JobsController, PolicyController, ResultsController], providers: [JobStarter, JobStatusCache, JobStatusRefresher, JobIdCheck], exports: [JobStatusCache, JobIdCheck] })
export class JobsApiModule {}
