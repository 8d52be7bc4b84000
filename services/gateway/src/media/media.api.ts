import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Infer, MediaAnswerSchema } from '@bns/contracts';
import { MediaUploads } from './media-uploads.js';

type MediaAnswer = Infer<typeof MediaAnswerSchema>;

/** The attachments' calls as the web and the /v1 API answer them. */
@Injectable()
export class MediaApi {
  constructor(private readonly uploads: MediaUploads) {}

  async upload(userId: string, req: IncomingMessage): Promise<MediaAnswer> {
    return { success: true, ...(await this.uploads.upload(userId, req)) };
  }

  async get(userId: string, mediaId: string): Promise<MediaAnswer> {
    return { success: true, ...(await this.uploads.get(userId, mediaId)) };
  }
}
