import type { RowsOptions } from '@bns/service-kit';

/**
 * The lane steps' batched statements (lock, take, record, mark running): each is parsed once per
 * connection and, after a few calls, planned once, instead of both on every batch (about a fifth of
 * the jobs service's Postgres CPU per message at delay 0 went to planning them). They run
 * only in lane-step transactions, which the LaneQueue plans by index (`plannedByIndex`), so their
 * generic plans look every row up by key, however small the tables were when they were made.
 */
export const STEP_PREPARED: RowsOptions = { prepare: 'always' };
