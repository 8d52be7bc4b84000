import { env, type EnvOf, type EnvVar } from '@bns/service-kit';

/** The contacts service's own variables (beyond the common and database ones of service-kit). */
export const CONTACTS_ENV = {
  CONTACTS_CONSUMER: env.str(
    'prefix of the durable JetStream consumers of message events that feed the facts and the inbox (shared by the replicas)',
    'contacts-facts',
  ),
  RETENTION_PURGE_EVERY_MS: env.int(
    "how often conversation messages past each user's retention are removed, ms (0 = never)",
    86_400_000,
    { min: 0 },
  ),
} satisfies Record<string, EnvVar<unknown>>;

export type ContactsEnv = EnvOf<typeof CONTACTS_ENV>;
