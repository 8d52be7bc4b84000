import { Module } from '@nestjs/common';

/** /api/dashboard and /api/user/preferences, answered by the dashboard service over NATS. */
@Module({})
export class DashboardApiModule {}
