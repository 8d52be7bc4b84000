import { runService } from '@bns/service-kit';
import { TEMPLATES_ENV } from './config/env.js';
import { CreateTemplates1763769600000 } from './database/migrations/1763769600000-create-templates.js';
import { TemplateEntity } from './templates/template.entity.js';
import { TemplatesModule } from './templates/templates.module.js';

await runService({
  name: 'templates',
  env: TEMPLATES_ENV,
  defaultPort: 3003,
  natsHandlers: true,
  database: { schema: 'templates', entities: [TemplateEntity], migrations: [CreateTemplates1763769600000] },
  module: () => TemplatesModule,
});
