import { Module } from '@nestjs/common';
import { MessageMetadataHandler } from './message-metadata.handler.js';
import { MessageMetadataRepository } from './message-metadata.repository.js';
import { MessageMetadataService } from './message-metadata.service.js';

/** What the service keeps of /v1 messages: the metadata they were sent with. */
@Module({ controllers: [MessageMetadataHandler], providers: [MessageMetadataService, MessageMetadataRepository] })
export class MessagesModule {}
