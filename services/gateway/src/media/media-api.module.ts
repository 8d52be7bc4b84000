import { Module } from '@nestjs/common';
import { MediaApi } from './media.api.js';
import { MediaController } from './media.controller.js';
import { MediaUploads } from './media-uploads.js';

/** /api/media: attachments, stored in the object store, recorded by the jobs service. */
@Module({
  controllers: [MediaController],
  providers: [MediaUploads, MediaApi],
  exports: [MediaUploads, MediaApi],
})
export class MediaApiModule {}
