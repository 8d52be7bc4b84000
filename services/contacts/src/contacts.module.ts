import { Module } from '@nestjs/common';
import { accountDataProviders, UserDeletionsModule, RETENTION_CLOCK, systemClock } from '@bns/service-kit';
import { ContactsAccountData } from './account/contacts-account-data.js';
import { RetentionPurge } from './retention/retention-purge.service.js';
import { RetentionRepository } from './retention/retention.repository.js';
import { ContactsHandler } from './contacts/contacts.handler.js';
import { ContactsRepository } from './contacts/contacts.repository.js';
import { ContactsService } from './contacts/contacts.service.js';
import { ConversationsRepository } from './conversations/conversations.repository.js';
import { ConversationsService } from './conversations/conversations.service.js';
import { FactsConsumer } from './facts/facts.consumer.js';
import { FactsRepository } from './facts/facts.repository.js';
import { ContactsMetrics } from './metrics/contacts.metrics.js';
import { SegmentsRepository } from './segments/segments.repository.js';
import { SegmentsService } from './segments/segments.service.js';
import { SettingsRepository } from './settings/settings.repository.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [ContactsHandler],
  providers: [
    ...accountDataProviders('contacts', ContactsAccountData),
    ContactsMetrics,
    ContactsRepository,
    ContactsService,
    SegmentsRepository,
    SegmentsService,
    ConversationsRepository,
    ConversationsService,
    SettingsRepository,
    FactsRepository,
    FactsConsumer,
    RetentionRepository,
    RetentionPurge,
    { provide: RETENTION_CLOCK, useValue: systemClock },
  ],
})
export class ContactsModule {}
