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
