import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { IdempotencyService } from './idempotency.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class IdempotencyHandler {
  constructor(private readonly idempotency: IdempotencyService) {}

  @Rpc('integrations.idempotency.begin')
  begin(
    @Payload() req: RequestOf<'integrations.idempotency.begin'>,
  ): Promise<ReplyOf<'integrations.idempotency.begin'>> {
    return this.idempotency.begin(req);
  }

  @Rpc('integrations.idempotency.finish')
  finish(
    @Payload() req: RequestOf<'integrations.idempotency.finish'>,
  ): Promise<ReplyOf<'integrations.idempotency.finish'>> {
    return this.idempotency.finish(req);
  }

  @Rpc('integrations.idempotency.release')
  release(
    @Payload() req: RequestOf<'integrations.idempotency.release'>,
  ): Promise<ReplyOf<'integrations.idempotency.release'>> {
    return this.idempotency.release(req);
  }
}
