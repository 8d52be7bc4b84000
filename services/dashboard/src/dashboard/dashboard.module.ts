import { RetentionPurge } from '../retention/retention-purge.service.js';
import { RetentionRepository } from '../retention/retention.repository.js';
import { Module } from '@nestjs/common';
import { accountDataProviders, UserDeletionsModule, RETENTION_CLOCK, systemClock } from '@bns/service-kit';
import { DashboardAccountData } from '../account/dashboard-account-data.js';
import { EventsConsumer } from '../projection/events.consumer.js';
import { ProjectionRepository } from '../projection/projection.repository.js';
import { ProjectionService } from '../projection/projection.service.js';
import { DashboardHandler } from './dashboard.handler.js';
import { DashboardService } from './dashboard.service.js';
import { PreferencesRepository } from './preferences.repository.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [DashboardHandler],
  providers: [
    DashboardService,
    PreferencesRepository,
    ProjectionRepository,
    ProjectionService,
    EventsConsumer,
    ...accountDataProviders('dashboard', DashboardAccountData),
    RetentionRepository,
    RetentionPurge,
    { provide: RETENTION_CLOCK, useValue: systemClock },
  ],
})
export class DashboardModule {}
