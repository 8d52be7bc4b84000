import { runService } from '@bns/service-kit';
import { DASHBOARD_ENV } from './config/env.js';
import { CreateDashboard1763769600000 } from './database/migrations/1763769600000-create-dashboard.js';
import { DashboardModule } from './dashboard/dashboard.module.js';

await runService({
  name: 'dashboard',
  env: DASHBOARD_ENV,
  defaultPort: 3004,
  natsHandlers: true,
  database: { schema: 'dashboard', entities: [], migrations: [CreateDashboard1763769600000] },
  module: () => DashboardModule,
});
