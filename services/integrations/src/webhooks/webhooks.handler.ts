import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { WebhooksService } from './webhooks.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class WebhooksHandler {
  constructor(private readonly webhooks: WebhooksService) {}

  @Rpc('integrations.webhooks.create')
  create(@Payload() req: RequestOf<'integrations.webhooks.create'>): Promise<ReplyOf<'integrations.webhooks.create'>> {
    return this.webhooks.create(req.userId, req.body);
  }

  @Rpc('integrations.webhooks.list')
  list(@Payload() req: RequestOf<'integrations.webhooks.list'>): Promise<ReplyOf<'integrations.webhooks.list'>> {
    return this.webhooks.list(req.userId);
  }

  @Rpc('integrations.webhooks.update')
  update(@Payload() req: RequestOf<'integrations.webhooks.update'>): Promise<ReplyOf<'integrations.webhooks.update'>> {
    return this.webhooks.update(req.userId, req.webhookId, req.body);
  }

  @Rpc('integrations.webhooks.delete')
  remove(@Payload() req: RequestOf<'integrations.webhooks.delete'>): Promise<ReplyOf<'integrations.webhooks.delete'>> {
    return this.webhooks.remove(req.userId, req.webhookId);
  }

  @Rpc('integrations.webhooks.secret')
  secret(@Payload() req: RequestOf<'integrations.webhooks.secret'>): Promise<ReplyOf<'integrations.webhooks.secret'>> {
    return this.webhooks.secret(req.userId, req.webhookId);
  }

  @Rpc('integrations.webhooks.rotate')
  rotate(@Payload() req: RequestOf<'integrations.webhooks.rotate'>): Promise<ReplyOf<'integrations.webhooks.rotate'>> {
    return this.webhooks.rotate(req.userId, req.webhookId);
  }

  @Rpc('integrations.webhooks.test')
  test(@Payload() req: RequestOf<'integrations.webhooks.test'>): Promise<ReplyOf<'integrations.webhooks.test'>> {
    return this.webhooks.test(req.userId, req.webhookId);
  }

  @Rpc('integrations.webhooks.deliveries')
  deliveries(
    @Payload() req: RequestOf<'integrations.webhooks.deliveries'>,
  ): Promise<ReplyOf<'integrations.webhooks.deliveries'>> {
    return this.webhooks.deliveries(req.userId, req.webhookId);
  }

  @Rpc('integrations.webhooks.resend')
  resend(@Payload() req: RequestOf<'integrations.webhooks.resend'>): Promise<ReplyOf<'integrations.webhooks.resend'>> {
    return this.webhooks.resend(req.userId, req.webhookId, req.deliveryId);
  }
}
