import { Module } from '@nestjs/common';
import { EventsConsumer } from '../projection/events.consumer.js';
import { ProjectionStore } from '../projection/projection.store.js';
import { DashboardHandler } from './dashboard.handler.js';
import { DashboardService } from './dashboard.service.js';

@Module({ controllers: [DashboardHandler], providers: [DashboardService, ProjectionStore, EventsConsumer] })
export class DashboardModule {}
