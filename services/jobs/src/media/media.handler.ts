import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { MediaLibrary } from './media.service.js';

@Controller()
export class MediaHandler {
  constructor(private readonly library: MediaLibrary) {}

  @Rpc('jobs.media.register')
  register(@Payload() req: RequestOf<'jobs.media.register'>): Promise<ReplyOf<'jobs.media.register'>> {
    return this.library.register(req);
  }

  @Rpc('jobs.media.get')
  get(@Payload() req: RequestOf<'jobs.media.get'>): Promise<ReplyOf<'jobs.media.get'>> {
    return this.library.get(req);
  }

  @Rpc('jobs.media.hold')
  hold(@Payload() req: RequestOf<'jobs.media.hold'>): Promise<ReplyOf<'jobs.media.hold'>> {
    return this.library.hold(req);
  }
}
