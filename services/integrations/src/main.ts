import { runService } from '@bns/service-kit';
import { INTEGRATIONS_ENV } from './config/env.js';
import { INTEGRATIONS_DATABASE } from './database/data-source.js';
import { IntegrationsModule } from './integrations.module.js';
import { registerIntegrationsMetrics } from './metrics/integrations.metrics.js';
import { AllowList } from './webhooks/egress.js';
import { secretKeyProblem } from './webhooks/secret-box.js';

await runService({
  name: 'integrations',
  env: INTEGRATIONS_ENV,
  defaultPort: 3005,
  natsHandlers: true,
  database: INTEGRATIONS_DATABASE,
  validate: (env) => [
    ...AllowList.problems(env.WEBHOOK_ALLOWED_HOSTS),
    ...[secretKeyProblem(env.INTEGRATIONS_SECRET_KEY)].filter((p): p is string => p !== undefined),
  ],
  module: () => IntegrationsModule,
  metrics: registerIntegrationsMetrics,
});
