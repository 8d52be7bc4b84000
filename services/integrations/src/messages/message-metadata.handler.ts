import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { MessageMetadataService } from './message-metadata.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class MessageMetadataHandler {
  constructor(private readonly metadata: MessageMetadataService) {}

  @Rpc('integrations.messages.metadata.put')
  put(
    @Payload() req: RequestOf<'integrations.messages.metadata.put'>,
  ): Promise<ReplyOf<'integrations.messages.metadata.put'>> {
    return this.metadata.put(req);
  }

  @Rpc('integrations.messages.metadata.get')
  get(
    @Payload() req: RequestOf<'integrations.messages.metadata.get'>,
  ): Promise<ReplyOf<'integrations.messages.metadata.get'>> {
    return this.metadata.get(req);
  }
}
