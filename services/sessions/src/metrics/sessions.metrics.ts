import type { SESSIONS_ENV } from '../config/env.js';
import { readdirSync, readFileSync } from 'node:fs';
import { AppError, counter, gauge, histogram, type KitContext, type ServiceEnv } from '@bns/service-kit';

/**
 * The sessions service's own metrics, fed by one-line hooks in the session events, the handler and
 * the restore path; engine processes are read from /proc on scrape. Labels: shard, state, outcome,
 * status — never a user id or a phone number (the per-user state map below is only counted).
 */
let shard = '0';

const sends = counter({
  name: 'bns_sessions_sends_total',
  help: 'Send requests answered by this shard, by outcome (sent, duplicate, or the error code)',
  labelNames: ['shard', 'outcome'],
});
const receipts = counter({
  name: 'bns_sessions_receipts_total',
  help: 'Delivery receipts (acks) of sent messages reported, by status (delivered, read)',
  labelNames: ['shard', 'status'],
});
const restoreSeconds = histogram({
  name: 'bns_sessions_restore_duration_seconds',
  help: "Time from the start of a stored link's restore to its engine being ready, no QR scan",
  labelNames: ['shard'],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
});

const ledgerBatch = histogram({
  name: 'bns_sessions_ledger_batch_size',
  help: 'Sends written by one send-ledger statement, by statement (claim, sent, sim_store, lid_pairs); mode=alone when a failed batch ran them one by one',
  labelNames: ['shard', 'statement', 'mode'],
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
});

const restoring = new Map<string, number>();

/** The last state each user of this shard was announced in; `no_session` forgets the user. */
const linkState = new Map<string, string>();
const STATE_GROUP: Record<string, string> = {
  qr: 'qr',
  qr_max_attempts: 'qr',
  creating: 'creating',
  ready: 'ready',
  exist: 'ready',
  disconnected: 'disconnected',
};

/** Hook: a session state event was published for `userId`. */
export function trackLinkState(userId: string, state: string): void {
  const group = STATE_GROUP[state];
  if (group) linkState.set(userId, group);
  else linkState.delete(userId);
  if (group !== 'ready' && group !== 'creating') restoring.delete(userId);
}

/** Hook: a delivery receipt was reported. */
export function countReceipt(status: string): void {
  receipts.inc({ shard, status: status === 'delivered' || status === 'read' ? status : 'other' });
}

/** Hook: wraps the handler's send, counting how it ended. */
export function countSend<T extends { duplicate?: boolean }>(reply: Promise<T>): Promise<T> {
  return reply.then(
    (r) => {
      sends.inc({ shard, outcome: r.duplicate ? 'duplicate' : 'sent' });
      return r;
    },
    (err: unknown) => {
      const code = AppError.fromUnknown(err).code;
      sends.inc({ shard, outcome: /^[A-Z0-9_]{1,48}$/.test(code) ? code : 'error' });
      throw err;
    },
  );
}

export type LedgerStatement = 'claim' | 'sent' | 'sim_store' | 'lid_pairs';

/** Hook: one send-ledger statement ran for `size` sends (a StatementBatcher's onBatch). */
export function countLedgerBatch(statement: LedgerStatement, size: number, alone: boolean): void {
  ledgerBatch.observe({ shard, statement, mode: alone ? 'alone' : 'batched' }, size);
}

/** Hook: a stored link of `userId` starts to be restored. */
export function restoreStarted(userId: string): void {
  restoring.set(userId, performance.now());
}
/** Hook: `userId`'s engine is ready; ends a restore if one was running. */
export function restoreFinished(userId: string): void {
  const started = restoring.get(userId);
  if (started === undefined) return;
  restoring.delete(userId);
  restoreSeconds.observe({ shard }, (performance.now() - started) / 1000);
}

/** Chromium processes under this process (whatsapp-web.js launches one browser, several processes, per link). */
export function chromiumProcesses(root = process.pid): number {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces or parentheses, so split at the last ')'.
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      const pid = Number(entry);
      names.set(pid, stat.slice(stat.indexOf('(') + 1, close));
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // the process ended while we read
    }
  }
  let count = 0;
  const stack = [...(children.get(root) ?? [])];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    if (/^chrom/i.test(names.get(pid) ?? '')) count++;
    stack.push(...(children.get(pid) ?? []));
  }
  return count;
}

/** Registered by main.ts. */
export function registerSessionsMetrics(ctx: KitContext<ServiceEnv<typeof SESSIONS_ENV>>): void {
  shard = String(ctx.info.shard ?? 0);
  const webjs = ctx.env.WA_ENGINE === 'webjs';
  gauge({
    name: 'bns_sessions_links',
    help: 'Links of this shard by state (qr, creating, ready, disconnected)',
    labelNames: ['shard', 'state'],
    collect() {
      const counts: Record<string, number> = { qr: 0, creating: 0, ready: 0, disconnected: 0 };
      for (const s of linkState.values()) counts[s] = (counts[s] ?? 0) + 1;
      for (const [state, n] of Object.entries(counts)) this.set({ shard, state }, n);
    },
  });
  gauge({
    name: 'bns_sessions_restores_in_progress',
    help: 'Stored links being restored right now',
    labelNames: ['shard'],
    collect() {
      this.set({ shard }, restoring.size);
    },
  });
  gauge({
    name: 'bns_sessions_engine_processes',
    help: 'Chromium processes running under this shard (webjs engine; 0 with the simulator)',
    labelNames: ['shard'],
    collect() {
      // The simulator launches no browser: no need to walk /proc.
      if (!webjs) return void this.set({ shard }, 0);
      try {
        this.set({ shard }, chromiumProcesses());
      } catch {
        // no /proc (not Linux): leave the gauge unset
      }
    },
  });
}
