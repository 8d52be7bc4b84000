import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { DashboardService } from './dashboard.service.js';

@Controller()
export class DashboardHandler {
  constructor(private readonly dashboard: DashboardService) {}

  @Rpc('dashboard.get')
  get(@Payload() req: RequestOf<'dashboard.get'>): Promise<ReplyOf<'dashboard.get'>> {
    return this.dashboard.get(req.userId, req.limit);
  }

  @Rpc('dashboard.preferences.get')
  getPreferences(
    @Payload() req: RequestOf<'dashboard.preferences.get'>,
  ): Promise<ReplyOf<'dashboard.preferences.get'>> {
    return this.dashboard.preferences(req.userId);
  }

  @Rpc('dashboard.preferences.set')
  setPreferences(
    @Payload() req: RequestOf<'dashboard.preferences.set'>,
  ): Promise<ReplyOf<'dashboard.preferences.set'>> {
    return this.dashboard.setPreferences(req.userId, req.preferences);
  }
}
