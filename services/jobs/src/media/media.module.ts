import { Module } from '@nestjs/common';
import { MEDIA_CLOCK, systemClock } from './media-clock.js';
import { MediaHandler } from './media.handler.js';
import { MediaObjects } from './media-objects.js';
import { MediaRepository } from './media.repository.js';
import { MediaLibrary } from './media.service.js';

/** Attachments' metadata (`jobs.media.*`) and their retention clean-up. */
@Module({
  controllers: [MediaHandler],
  providers: [MediaRepository, MediaObjects, MediaLibrary, { provide: MEDIA_CLOCK, useValue: systemClock }],
  exports: [MediaLibrary, MediaRepository],
})
export class MediaModule {}
