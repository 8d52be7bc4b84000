import { env, type EnvOf, type EnvVar } from '@bns/service-kit';

/**
 * How soon a read-model event that failed is tried again: after a Postgres outage the read model catches
 * up within seconds instead of after a back-off that grew through the outage.
 */
export const DASHBOARD_REDELIVERY = { baseMs: 500, maxMs: 5000 } as const;

/** The dashboard service's own variables (beyond the common and database ones of service-kit). */
export const DASHBOARD_ENV = {
  DASHBOARD_CONSUMER: env.str(
    'prefix of the durable JetStream consumers that feed the read model (one per event subject)',
    'dashboard',
  ),
  DASHBOARD_BATCH_MAX: env.int('most events applied in one database transaction', 500, { min: 1, max: 10_000 }),
  DASHBOARD_ACK_WAIT_MS: env.int(
    'how long JetStream waits for an ack before redelivering an event (after a crash, events in flight wait this long), ms',
    10_000,
    { min: 1000 },
  ),
  DASHBOARD_MAX_DELIVER: env.int(
    `deliveries of an event that keeps failing before it is dropped (and logged); retried at most ${DASHBOARD_REDELIVERY.maxMs / 1000} s apart, so 100 outlast an 8-minute Postgres outage`,
    100,
    { min: 2 },
  ),
  DASHBOARD_APPLIED_EVENTS_RETENTION_DAYS: env.int(
    'days an applied event id is kept for dedupe; keep it above the EVENTS stream age (30 days)',
    35,
    { min: 1 },
  ),
  RETENTION_PURGE_EVERY_MS: env.int(
    "how often message text and replies past each user's retention are removed from the read model, ms (0 = never)",
    86_400_000,
    { min: 0 },
  ),
} satisfies Record<string, EnvVar<unknown>>;

export type DashboardEnv = EnvOf<typeof DASHBOARD_ENV>;
