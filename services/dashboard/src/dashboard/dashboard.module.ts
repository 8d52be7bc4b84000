import { Module } from '@nestjs/common';
import { EventsConsumer } from '../projection/events.consumer.js';
import { ProjectionRepository } from '../projection/projection.repository.js';
import { ProjectionService } from '../projection/projection.service.js';
import { DashboardHandler } from './dashboard.handler.js';
import { DashboardService } from './dashboard.service.js';
import { PreferencesRepository } from './preferences.repository.js';

@Module({
  controllers: [DashboardHandler],
  providers: [DashboardService, PreferencesRepository, ProjectionRepository, ProjectionService, EventsConsumer],
})
export class DashboardModule {}
