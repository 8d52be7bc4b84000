import { Inject, Injectable } from '@nestjs/common';
import {
  checkWith,
  CommonErrorCode,
  MessageMetadataSchema,
  type MessageMetadata,
  type MessageMetadataPutRequest,
  type MessageMetadataRef,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import { MessageMetadataRepository } from './message-metadata.repository.js';

/** The metadata a /v1 message was sent with: checked again here (the bound is the contracts'), stored, read back. */
@Injectable()
export class MessageMetadataService {
  constructor(
    private readonly metadata: MessageMetadataRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async put(req: MessageMetadataPutRequest): Promise<{ stored: true }> {
    const checked = checkWith(MessageMetadataSchema, req.metadata);
    if (!checked.ok) throw AppError.validation(CommonErrorCode.BadRequest, checked.message, checked.errors);
    await this.metadata.put(req.userId, req.messageId, checked.value, this.clock.now());
    return { stored: true };
  }

  async get(req: MessageMetadataRef): Promise<{ metadata: MessageMetadata | null }> {
    return { metadata: (await this.metadata.get(req.userId, req.messageId)) ?? null };
  }
}
