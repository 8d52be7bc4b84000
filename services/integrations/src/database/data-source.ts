import type { DatabaseOptions } from '@bns/service-kit';
import { ApiKeyEntity } from '../api-keys/api-key.entity.js';
import { CreateIntegrations1797000000000 } from './migrations/1797000000000-create-integrations.js';
import { SealedSecretsAndMetadata1797200000000 } from './migrations/1797200000000-sealed-secrets-and-metadata.js';
import { OptOutWatermarks1797250000000 } from './migrations/1797250000000-opt-out-watermarks.js';
import { AccountDeletions1797300000000 } from './migrations/1797300000000-account-deletions.js';
import { AuditLog1797400000000 } from './migrations/1797400000000-audit-log.js';

/**
 * The integrations schema: API keys (hashes only), webhook endpoints (secrets sealed), deliveries (the
 * delivery queue), campaign states, idempotency keys, the metadata of /v1 messages, account deletions, retention settings and the audit log. Repositories use raw SQL on the tables the migration creates.
 */
export const INTEGRATIONS_DATABASE = {
  schema: 'integrations',
  entities: [ApiKeyEntity],
  migrations: [
    CreateIntegrations1797000000000,
    SealedSecretsAndMetadata1797200000000,
    OptOutWatermarks1797250000000,
    AccountDeletions1797300000000,
    AuditLog1797400000000,
  ],
} satisfies Omit<DatabaseOptions, 'url'>;
