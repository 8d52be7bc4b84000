import type { StatementBatcherOptions } from '@bns/service-kit';
import type { SessionsEnv } from '../config/env.js';
import { countLedgerBatch, type LedgerStatement } from '../metrics/sessions.metrics.js';

export type LedgerBatchEnv = Pick<SessionsEnv, 'SESSIONS_LEDGER_BATCH' | 'SESSIONS_LEDGER_STATEMENTS'>;

/** How one kind of send-ledger statement is batched (SESSIONS_LEDGER_*), each statement counted in the metrics. */
export function ledgerBatching(env: LedgerBatchEnv, statement: LedgerStatement): StatementBatcherOptions {
  return {
    maxBatch: env.SESSIONS_LEDGER_BATCH,
    maxInFlight: env.SESSIONS_LEDGER_STATEMENTS,
    onBatch: (size, alone) => countLedgerBatch(statement, size, alone),
  };
}

/** One string per (user, idempotency key). */
export const userKey = (userId: string, key: string): string => `${userId.length}:${userId}${key}`;

/** The index of the first item of each (user, key) in a batch. */
export function firstOfEachKey(items: readonly { userId: string; key: string }[]): Map<string, number> {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    const k = userKey(item.userId, item.key);
    if (!first.has(k)) first.set(k, i);
  });
  return first;
}
