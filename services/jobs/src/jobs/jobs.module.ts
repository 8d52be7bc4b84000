import { Module } from '@nestjs/common';
import { OutboxPublisher } from '../events/outbox-publisher.js';
import { LaneQueue } from '../queue/lane-queue.js';
import { LaneWorker } from '../queue/lane-worker.js';
import { JobsHandler } from './jobs.handler.js';
import { JobsService } from './jobs.service.js';

@Module({ controllers: [JobsHandler], providers: [JobsService, LaneQueue, LaneWorker, OutboxPublisher] })
export class JobsModule {}
