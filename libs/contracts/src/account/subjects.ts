/**
 * The services that hold a user's data: each one deletes what it owns when `events.user.deletion.requested`
 * arrives and answers with `events.user.deletion.receipt` naming itself; the deletion is done when every
 * one of them answered. A new service that stores anything about a user adds its name here and one
 * handler (service-kit `AccountDataModule.forOwner`), nothing else.
 */
export const ACCOUNT_DATA_OWNERS = ['jobs', 'templates', 'dashboard', 'sessions', 'integrations', 'contacts'] as const;
export type AccountDataOwner = (typeof ACCOUNT_DATA_OWNERS)[number];

export const USER_DELETION_REQUESTED = 'events.user.deletion.requested';
export const USER_DELETION_RECEIPT = 'events.user.deletion.receipt';

/**
 * JetStream KV bucket of deletions, by `userKeyOf(userId)` (a hash: no user id is stored): when the
 * deletion was requested and whether it is done. Gateways refuse every token issued before it; read
 * models drop late events of the deleted account. File storage: it must outlive a NATS restart.
 */
export const ACCOUNT_DELETIONS_BUCKET = 'account-deletions';

/**
 * JetStream KV bucket of the take-outs running now, by `userKeyOf(userId)`: at most one per user across
 * the gateway replicas. An entry lives ACCOUNT_LIMITS.takeoutLeaseMs unless its gateway renews it, so
 * one left by a replica that died frees itself.
 */
export const ACCOUNT_TAKEOUTS_BUCKET = 'account-takeouts';

/** The files of a take-out, one JSON and one CSV per area (campaign results have a CSV of their own). */
export const TAKEOUT_AREAS = [
  'templates',
  'campaigns',
  'opt-outs',
  'contacts',
  'preferences',
  'policy',
  'audit-log',
] as const;
export type TakeoutArea = (typeof TAKEOUT_AREAS)[number];
