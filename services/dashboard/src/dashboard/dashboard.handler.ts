import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { DashboardService } from './dashboard.service.js';

@Controller()
export class DashboardHandler {
  constructor(private readonly dashboard: DashboardService) {}

  @MessagePattern('dashboard.get')
  get(@Payload() req: RequestOf<'dashboard.get'>): Promise<ReplyOf<'dashboard.get'>> {
    return this.dashboard.get(req.userId, req.limit);
  }

  @MessagePattern('dashboard.preferences.get')
  getPreferences(@Payload() req: RequestOf<'dashboard.preferences.get'>): Promise<ReplyOf<'dashboard.preferences.get'>> {
    return this.dashboard.preferences(req.userId);
  }

  @MessagePattern('dashboard.preferences.set')
  setPreferences(@Payload() req: RequestOf<'dashboard.preferences.set'>): Promise<ReplyOf<'dashboard.preferences.set'>> {
    return this.dashboard.setPreferences(req.userId, req.preferences);
  }
}
