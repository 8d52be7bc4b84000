import { Module } from '@nestjs/common';
import { ReceiptsConsumer } from './receipts.consumer.js';
import { ResultsHandler } from './results.handler.js';
import { ResultsRepository } from './results.repository.js';
import { ResultsService } from './results.service.js';

/** Campaign results: the report, its export, the history, receipts. */
@Module({
  controllers: [ResultsHandler],
  providers: [ResultsRepository, ResultsService, ReceiptsConsumer],
  exports: [ResultsRepository],
})
export class ResultsModule {}
