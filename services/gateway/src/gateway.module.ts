import { Module, type DynamicModule } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import type { GatewayEnv } from './config/env.js';
import { DashboardApiModule } from './dashboard/dashboard-api.module.js';
import { BodySizeInterceptor } from './http/body-size.js';
import { JobsApiModule } from './jobs/jobs-api.module.js';
import { OptOutsApiModule } from './optouts/opt-outs-api.module.js';
import { PublicConfigController } from './public-config/public-config.controller.js';
import { RealtimeGateway } from './realtime/realtime.gateway.js';
import { SessionsApiModule } from './sessions/sessions-api.module.js';
import { TemplatesApiModule } from './templates/templates-api.module.js';

@Module({})
export class GatewayModule {
  static forRoot(env: GatewayEnv): DynamicModule {
    return {
      module: GatewayModule,
      imports: [AuthModule.forRoot(env), TemplatesApiModule, SessionsApiModule.forRoot(env), JobsApiModule, DashboardApiModule, OptOutsApiModule],
      controllers: [PublicConfigController],
      providers: [RealtimeGateway, { provide: APP_INTERCEPTOR, useClass: BodySizeInterceptor }],
    };
  }
}
