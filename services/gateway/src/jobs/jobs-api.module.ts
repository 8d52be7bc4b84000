import { Module } from '@nestjs/common';
import { JobsController } from './jobs.controller.js';

/** /start-bulk-messages, /job-status, /job-logs and /cancel-job, answered by the jobs service over NATS. */
@Module({ controllers: [JobsController] })
export class JobsApiModule {}
