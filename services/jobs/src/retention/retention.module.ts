import { Module } from '@nestjs/common';
import { RETENTION_CLOCK, systemClock } from './retention-clock.js';
import { RetentionPurge } from './retention-purge.service.js';
import { RetentionRepository } from './retention.repository.js';

/** The campaigns' retention purge (the user's setting, read from integrations). */
@Module({
  providers: [RetentionRepository, RetentionPurge, { provide: RETENTION_CLOCK, useValue: systemClock }],
})
export class RetentionModule {}
