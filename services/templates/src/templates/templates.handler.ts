import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { TemplatesService } from './templates.service.js';

@Controller()
export class TemplatesHandler {
  constructor(private readonly templates: TemplatesService) {}

  @MessagePattern('templates.stats')
  stats(@Payload() req: RequestOf<'templates.stats'>): Promise<ReplyOf<'templates.stats'>> {
    return this.templates.stats(req.userId);
  }
}
