import { Global, Module } from '@nestjs/common';
import { AccountModule } from './account/account.module.js';
import { AuditModule } from './audit/audit.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { CLOCK, systemClock } from './clock/clock.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { MessagesModule } from './messages/messages.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** The clock every timer reads (tests replace it). */
@Global()
@Module({ providers: [{ provide: CLOCK, useValue: systemClock }], exports: [CLOCK] })
export class ClockModule {}

@Module({
  imports: [ClockModule, ApiKeysModule, WebhooksModule, IdempotencyModule, MessagesModule, AccountModule, AuditModule],
})
export class IntegrationsModule {}
