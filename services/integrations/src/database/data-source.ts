import type { DatabaseOptions } from '@bns/service-kit';
import { ApiKeyEntity } from '../api-keys/api-key.entity.js';
import { CreateIntegrations1797000000000 } from './migrations/1797000000000-create-integrations.js';

/**
 * The integrations schema: API keys (hashes only), webhook endpoints, deliveries (the delivery queue),
 * campaign states and idempotency keys. Repositories use raw SQL on the tables the migration creates.
 */
export const INTEGRATIONS_DATABASE = {
  schema: 'integrations',
  entities: [ApiKeyEntity],
  migrations: [CreateIntegrations1797000000000],
} satisfies Omit<DatabaseOptions, 'url'>;
