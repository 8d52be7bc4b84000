import { Module } from '@nestjs/common';
import { DashboardApi } from './dashboard.api.js';
import { DashboardController } from './dashboard.controller.js';

/** /api/dashboard and /api/user/preferences, answered by the dashboard service over NATS. */
@Module({ controllers: [DashboardController], providers: [DashboardApi] })
export class DashboardApiModule {}
