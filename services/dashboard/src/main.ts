import { runService } from '@bns/service-kit';
import { DASHBOARD_ENV } from './config/env.js';
import { DASHBOARD_DATABASE } from './database/data-source.js';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { registerDashboardMetrics } from './metrics/dashboard.metrics.js';

await runService({
  name: 'dashboard',
  env: DASHBOARD_ENV,
  defaultPort: 3004,
  natsHandlers: true,
  database: DASHBOARD_DATABASE,
  module: () => DashboardModule,
  metrics: registerDashboardMetrics,
});
