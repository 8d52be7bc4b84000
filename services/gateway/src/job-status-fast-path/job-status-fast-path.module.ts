import { Module } from '@nestjs/common';
import { JobIdCheck } from './job-id-check.js';
import { JobStatusCache, JobStatusCacheReset, JobStatusRefresher } from './job-status-cache.js';
import { JobStatusService } from './job-status.service.js';

/**
 * What answers job-status polls cheaply: the job id check, the memory of job versions (with its
 * refresh ahead and its reset on a NATS reconnect) and the route's answer. The pre-Express front door
 * and the hot routes' quiet logging are installed by `installJobStatusFastPath` (main.ts).
 */
@Module({
  providers: [JobStatusCache, JobStatusRefresher, JobStatusCacheReset, JobIdCheck, JobStatusService],
  exports: [JobStatusCache, JobIdCheck, JobStatusService],
})
export class JobStatusFastPathModule {}
