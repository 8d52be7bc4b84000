import { RETENTION_CLOCK, systemClock } from '@bns/service-kit';
import { Module } from '@nestjs/common';
import { RetentionPurge } from './retention-purge.service.js';
import { RetentionRepository } from './retention.repository.js';

/** The campaigns' retention purge (the user's setting, read from integrations). */
@Module({
  providers: [RetentionRepository, RetentionPurge, { provide: RETENTION_CLOCK, useValue: systemClock }],
})
export class RetentionModule {}
