import { runService } from '@bns/service-kit';
import { TEMPLATES_ENV } from './config/env.js';
import { TEMPLATES_DATABASE } from './database/data-source.js';
import { TemplatesModule } from './templates/templates.module.js';

await runService({
  name: 'templates',
  env: TEMPLATES_ENV,
  defaultPort: 3003,
  natsHandlers: true,
  database: TEMPLATES_DATABASE,
  module: () => TemplatesModule,
});
