import { Module } from '@nestjs/common';
import { DashboardController } from './dashboard.controller.js';

/** /api/dashboard and /api/user/preferences, answered by the dashboard service over NATS. */
@Module({ controllers: [DashboardController] })
export class DashboardApiModule {}
