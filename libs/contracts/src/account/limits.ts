/** Numbers of the account-and-data rules (deletion, retention, audit), shared by the services and the web. */
export const ACCOUNT_LIMITS = {
  /** Rows one statement of a deletion or a purge removes: each batch is its own short transaction. */
  deleteBatchRows: 5000,
  /** Retention choices in days; `null` keeps message details until the user deletes them. */
  retentionDays: [30, 90, 365] as const,
  retentionDefaultDays: 365,
  /** Retention settings an owner reads per request before its purge. */
  retentionPageMax: 1000,
  /** How often each owner runs its retention purge. */
  purgeEveryMs: 24 * 60 * 60 * 1000,
  /** Audit entries are kept this long. */
  auditKeepDays: 365,
  auditPageMax: 200,
  auditPageDefault: 50,
  /** A running take-out's hold on its user, renewed while it runs (a dead replica's frees itself). */
  takeoutLeaseMs: 60_000,
  /** How long the gateways remember a deletion (refusing older tokens); longer than any token lives. */
  deletionMemoryDays: 30,
} as const;

export type RetentionDays = (typeof ACCOUNT_LIMITS.retentionDays)[number] | null;
