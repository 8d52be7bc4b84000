import { Module } from '@nestjs/common';

/** /start-bulk-messages, /job-status, /job-logs and /cancel-job, answered by the jobs service over NATS. */
@Module({})
export class JobsApiModule {}
