import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { TemplatesService } from './templates.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class TemplatesHandler {
  constructor(private readonly templates: TemplatesService) {}

  @Rpc('templates.list')
  list(@Payload() req: RequestOf<'templates.list'>): Promise<ReplyOf<'templates.list'>> {
    return this.templates.list(req);
  }

  @Rpc('templates.create')
  create(@Payload() req: RequestOf<'templates.create'>): Promise<ReplyOf<'templates.create'>> {
    return this.templates.create(req.userId, req.body, req.idempotencyKey);
  }

  @Rpc('templates.update')
  update(@Payload() req: RequestOf<'templates.update'>): Promise<ReplyOf<'templates.update'>> {
    return this.templates.update(req.userId, req.templateId, req.body);
  }

  @Rpc('templates.delete')
  remove(@Payload() req: RequestOf<'templates.delete'>): Promise<ReplyOf<'templates.delete'>> {
    return this.templates.remove(req.userId, req.templateId);
  }

  @Rpc('templates.duplicate')
  duplicate(@Payload() req: RequestOf<'templates.duplicate'>): Promise<ReplyOf<'templates.duplicate'>> {
    return this.templates.duplicate(req.userId, req.templateId);
  }

  @Rpc('templates.categories')
  categories(@Payload() req: RequestOf<'templates.categories'>): Promise<ReplyOf<'templates.categories'>> {
    return this.templates.categories(req.userId);
  }

  @Rpc('templates.stats')
  stats(@Payload() req: RequestOf<'templates.stats'>): Promise<ReplyOf<'templates.stats'>> {
    return this.templates.stats(req.userId);
  }

  @Rpc('templates.use')
  use(@Payload() req: RequestOf<'templates.use'>): Promise<ReplyOf<'templates.use'>> {
    return this.templates.use(req.userId, req.templateId);
  }
}
