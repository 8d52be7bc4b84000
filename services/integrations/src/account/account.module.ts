import { Module } from '@nestjs/common';
import { accountDataProviders, UserDeletionsModule } from '@bns/service-kit';
import { AccountHandler } from './account.handler.js';
import { AccountDeletionsRepository } from './account-deletions.repository.js';
import { AccountDeletionsService } from './account-deletions.service.js';
import { IntegrationsAccountData } from './integrations-account-data.js';
import { DeletionReceiptsConsumer } from './receipts.consumer.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [AccountHandler],
  providers: [
    AccountDeletionsRepository,
    AccountDeletionsService,
    DeletionReceiptsConsumer,
    ...accountDataProviders('integrations', IntegrationsAccountData),
  ],
})
export class AccountModule {}
