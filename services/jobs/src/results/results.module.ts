import { Module } from '@nestjs/common';
import { OutboxPublisher, OutboxRepository } from '@bns/service-kit';
import { JobJournals, JournalWriter } from '../events/job-journal.js';
import { JobLogsRepository } from '../events/job-logs.repository.js';
import { ReceiptsConsumer } from './receipts.consumer.js';
import { Refusals } from './refusals.js';
import { RefusalsRepository } from './refusals.repository.js';
import { ResultsHandler } from './results.handler.js';
import { ResultsRepository } from './results.repository.js';
import { ResultsService } from './results.service.js';
import { UnansweredRepository } from './unanswered.repository.js';

/**
 * Campaign results: the report, its export, the history, receipts and refusals. The service's one
 * outbox publisher lives here (the jobs module imports it), so a refusal's log lines and pause go
 * out as soon as they commit.
 */
@Module({
  controllers: [ResultsHandler],
  providers: [
    ResultsRepository,
    ResultsService,
    ReceiptsConsumer,
    RefusalsRepository,
    Refusals,
    UnansweredRepository,
    JobLogsRepository,
    OutboxRepository,
    JournalWriter,
    JobJournals,
    OutboxPublisher,
  ],
  exports: [ResultsRepository, OutboxPublisher],
})
export class ResultsModule {}
