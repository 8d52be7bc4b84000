import { Module } from '@nestjs/common';
import { ReceiptsConsumer } from './receipts.consumer.js';
import { ResultsHandler } from './results.handler.js';
import { ResultsRepository } from './results.repository.js';
import { ResultsService } from './results.service.js';
import { StartGuard } from './start-guard.js';

/** Campaign results: idempotent starts and caps, the report, its export, the history, receipts. */
@Module({
  controllers: [ResultsHandler],
  providers: [ResultsRepository, ResultsService, StartGuard, ReceiptsConsumer],
  exports: [StartGuard, ResultsRepository],
})
export class ResultsModule {}
