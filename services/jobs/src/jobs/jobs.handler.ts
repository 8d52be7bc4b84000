import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { JobsService } from './jobs.service.js';

@Controller()
export class JobsHandler {
  constructor(private readonly jobs: JobsService) {}

  @MessagePattern('jobs.start')
  start(@Payload() req: RequestOf<'jobs.start'>): Promise<ReplyOf<'jobs.start'>> {
    return this.jobs.start(req);
  }

  @MessagePattern('jobs.status')
  status(@Payload() req: RequestOf<'jobs.status'>): Promise<ReplyOf<'jobs.status'>> {
    return this.jobs.status(req);
  }

  @MessagePattern('jobs.logs')
  logs(@Payload() req: RequestOf<'jobs.logs'>): Promise<ReplyOf<'jobs.logs'>> {
    return this.jobs.logs(req);
  }

  @MessagePattern('jobs.cancel')
  cancel(@Payload() req: RequestOf<'jobs.cancel'>): Promise<ReplyOf<'jobs.cancel'>> {
    return this.jobs.cancel(req);
  }
}
