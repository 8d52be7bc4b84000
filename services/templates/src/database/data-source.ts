import type { DatabaseOptions } from '@bns/service-kit';
import { TemplateEntity } from '../templates/template.entity.js';
import { CreateTemplates1763769600000 } from './migrations/1763769600000-create-templates.js';
import { TemplateCreates1796300000000 } from './migrations/1796300000000-template-creates.js';
import { TemplateMedia1797900000000 } from './migrations/1797900000000-template-media.js';

/** The templates schema: an entity per table and the migrations that create them (the service and its tests share it). */
export const TEMPLATES_DATABASE = {
  schema: 'templates',
  entities: [TemplateEntity],
  migrations: [CreateTemplates1763769600000, TemplateCreates1796300000000, TemplateMedia1797900000000],
} satisfies Omit<DatabaseOptions, 'url'>;
