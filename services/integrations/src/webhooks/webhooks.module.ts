import { WebhookDeliveriesPurge } from './deliveries-purge.js';
import { Module } from '@nestjs/common';
import { Dispatcher } from './dispatcher.js';
import { WebhookEventsConsumer } from './events.consumer.js';
import { FanOutService } from './fan-out.service.js';
import { OptOutNotices } from './opt-out-notices.js';
import { SealedSecrets } from './sealed-secrets.js';
import { WebhooksHandler } from './webhooks.handler.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  controllers: [WebhooksHandler],
  providers: [
    SealedSecrets,
    WebhooksService,
    WebhooksRepository,
    FanOutService,
    Dispatcher,
    WebhookEventsConsumer,
    OptOutNotices,
    WebhookDeliveriesPurge,
  ],
})
export class WebhooksModule {}
