import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { ApiKeysService } from './api-keys.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class ApiKeysHandler {
  constructor(private readonly keys: ApiKeysService) {}

  @Rpc('integrations.keys.create')
  create(@Payload() req: RequestOf<'integrations.keys.create'>): Promise<ReplyOf<'integrations.keys.create'>> {
    return this.keys.create(req.userId, req.body);
  }

  @Rpc('integrations.keys.list')
  list(@Payload() req: RequestOf<'integrations.keys.list'>): Promise<ReplyOf<'integrations.keys.list'>> {
    return this.keys.list(req.userId);
  }

  @Rpc('integrations.keys.revoke')
  revoke(@Payload() req: RequestOf<'integrations.keys.revoke'>): Promise<ReplyOf<'integrations.keys.revoke'>> {
    return this.keys.revoke(req.userId, req.keyId);
  }

  @Rpc('integrations.keys.verify')
  verify(@Payload() req: RequestOf<'integrations.keys.verify'>): Promise<ReplyOf<'integrations.keys.verify'>> {
    return this.keys.verify(req.hash);
  }
}
