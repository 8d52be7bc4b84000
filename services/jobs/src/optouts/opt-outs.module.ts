import { Module } from '@nestjs/common';
import { InboundConsumer } from './inbound.consumer.js';
import { OptOutsHandler } from './opt-outs.handler.js';
import { OptOutsRepository } from './opt-outs.repository.js';
import { OptOutsService } from './opt-outs.service.js';

/**
 * Opt-outs: the list and its settings (`jobs.optouts.*`) and inbound keywords. The job start and the
 * lane step get their own instance of the (stateless) repository from the jobs module (JOBS_REPOSITORIES).
 */
@Module({ controllers: [OptOutsHandler], providers: [OptOutsRepository, OptOutsService, InboundConsumer] })
export class OptOutsModule {}
