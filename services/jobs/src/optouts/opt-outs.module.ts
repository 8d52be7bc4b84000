import { Module } from '@nestjs/common';
import { LaneStepRepository } from '../queue/lane-step.repository.js';
import { InboundConsumer } from './inbound.consumer.js';
import { OptOutsHandler } from './opt-outs.handler.js';
import { OptOutsRepository } from './opt-outs.repository.js';
import { OptOutsService } from './opt-outs.service.js';

/**
 * Opt-outs: the list and its settings (`jobs.optouts.*`) and inbound keywords. The review step's check
 * asks the lane step's rule (`LaneStepRepository`). The job start gets its own instance of the
 * (stateless) repositories from the jobs module (JOBS_REPOSITORIES).
 */
@Module({
  controllers: [OptOutsHandler],
  providers: [OptOutsRepository, LaneStepRepository, OptOutsService, InboundConsumer],
})
export class OptOutsModule {}
