import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { OptOutsService } from './opt-outs.service.js';

/** `jobs.optouts.*` requests from the gateway: one service call each. */
@Controller()
export class OptOutsHandler {
  constructor(private readonly optOuts: OptOutsService) {}

  @Rpc('jobs.optouts.list')
  list(@Payload() req: RequestOf<'jobs.optouts.list'>): Promise<ReplyOf<'jobs.optouts.list'>> {
    return this.optOuts.list(req);
  }

  @Rpc('jobs.optouts.add')
  add(@Payload() req: RequestOf<'jobs.optouts.add'>): Promise<ReplyOf<'jobs.optouts.add'>> {
    return this.optOuts.add(req);
  }

  @Rpc('jobs.optouts.remove')
  remove(@Payload() req: RequestOf<'jobs.optouts.remove'>): Promise<ReplyOf<'jobs.optouts.remove'>> {
    return this.optOuts.remove(req);
  }

  @Rpc('jobs.optouts.export')
  exportPage(@Payload() req: RequestOf<'jobs.optouts.export'>): Promise<ReplyOf<'jobs.optouts.export'>> {
    return this.optOuts.exportPage(req);
  }

  @Rpc('jobs.optouts.check')
  check(@Payload() req: RequestOf<'jobs.optouts.check'>): Promise<ReplyOf<'jobs.optouts.check'>> {
    return this.optOuts.check(req);
  }

  @Rpc('jobs.optouts.settings.get')
  getSettings(@Payload() req: RequestOf<'jobs.optouts.settings.get'>): Promise<ReplyOf<'jobs.optouts.settings.get'>> {
    return this.optOuts.getSettings(req);
  }

  @Rpc('jobs.optouts.settings.set')
  setSettings(@Payload() req: RequestOf<'jobs.optouts.settings.set'>): Promise<ReplyOf<'jobs.optouts.settings.set'>> {
    return this.optOuts.setSettings(req);
  }
}
