import { Module, type DynamicModule } from '@nestjs/common';
import { AccountApiModule } from './account/account-api.module.js';
import { AuditApiModule } from './audit/audit.module.js';
import { ApiKeysApiModule } from './api-keys/api-keys.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ContactsApiModule } from './contacts/contacts-api.module.js';
import type { GatewayEnv } from './config/env.js';
import { DashboardApiModule } from './dashboard/dashboard-api.module.js';
import { JobStatusFastPathModule } from './job-status-fast-path/index.js';
import { JobsApiModule } from './jobs/jobs-api.module.js';
import { MediaApiModule } from './media/media-api.module.js';
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
      // Express tries routes in the order they were added: the jobs routes (the pollers' job-status and
      // job-logs) go first so a poll is not matched against every other route's path on its way.
      // No jobs route shares a path with another module's, so the order changes no answer.
      imports: [
        AuditApiModule,
        AuthModule.forRoot(env),
        JobsApiModule,
        TemplatesApiModule,
        SessionsApiModule.forRoot(env),
        DashboardApiModule,
        OptOutsApiModule,
        ApiKeysApiModule,
        ContactsApiModule,
        AccountApiModule,
        MediaApiModule,
        JobStatusFastPathModule,
      ],
      controllers: [PublicConfigController],
      // RealtimeGateway tells the job-status cache of every event it hears (JobStatusFastPathModule).
      providers: [RealtimeGateway],
    };
  }
}
