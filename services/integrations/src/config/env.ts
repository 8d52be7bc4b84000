import { env, type EnvOf, type EnvVar } from '@bns/service-kit';

/** The integrations service's own variables (beyond the common and database ones of service-kit). */
export const INTEGRATIONS_ENV = {
  INTEGRATIONS_SECRET_KEY: env.str(
    'key that seals webhook signing secrets at rest (AES-256-GCM): 32 random bytes, base64 or hex (`openssl rand -base64 32`); keep it in a secret store: without it the stored secrets cannot be opened, and a different key stops the service at start. npm start makes one in .data/ when unset; the chart keeps it in a Secret',
  ),
  WEBHOOK_ALLOWED_HOSTS: env.list(
    'hosts or CIDRs (comma-separated) that webhooks may reach although they are loopback, private, link-local or otherwise non-public, and the only ones plain http:// may go to; empty = public https:// endpoints only (tests and local runs set it, e.g. 127.0.0.1,localhost)',
  ),
  INTEGRATIONS_CONSUMER: env.str(
    'name of the durable JetStream consumer of events.> that feeds webhook deliveries (shared by the replicas)',
    'integrations-webhooks',
  ),
  INTEGRATIONS_ACK_WAIT_MS: env.int(
    'how long JetStream waits for an ack before redelivering an event to this service, ms',
    10_000,
    { min: 1000 },
  ),
  WEBHOOK_CONCURRENCY: env.int('webhook POSTs one replica has in flight at most (at most one per endpoint)', 64, {
    min: 1,
    max: 2000,
  }),
  WEBHOOK_POLL_MS: env.int('how often a replica looks for deliveries that are due when none were signalled, ms', 500, {
    min: 10,
  }),
  WEBHOOK_LEASE_MS: env.int(
    'how long a claimed delivery is kept from other replicas; one whose replica died is sent again (same webhook-id) after this, ms',
    30_000,
    { min: 11_000 },
  ),
  WEBHOOK_RETRY_SCALE: env.int(
    'divides the retry schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): 1 in production; tests set a large value so a day of retries takes seconds',
    1,
    { min: 1 },
  ),
  RETENTION_PURGE_EVERY_MS: env.int(
    "how often this service removes what is past its keeping time (audit entries after a year, webhook deliveries past the user's retention), ms",
    86_400_000,
    { min: 1000 },
  ),
} satisfies Record<string, EnvVar<unknown>>;

export type IntegrationsEnv = EnvOf<typeof INTEGRATIONS_ENV>;
