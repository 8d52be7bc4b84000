import { LIMITS } from '@bns/contracts';
import { env, type EnvOf } from '@bns/service-kit';

/** The jobs service's own variables (beyond the common and database ones of service-kit). */
export const JOBS_ENV = {
  SEND_DELAY_MS: env.int('pause between two messages of one account (per user, across all jobs and replicas)', LIMITS.defaultSendDelayMs, { min: 0 }),
  SEND_JITTER_MS: env.int('random extra pause, 0 to this many ms, added to each SEND_DELAY_MS (looks less like a bot)', 0, { min: 0 }),
  MAX_RECIPIENTS_PER_JOB: env.int('largest job accepted, after duplicates are merged (400 above)', LIMITS.defaultMaxRecipientsPerJob, { min: 1 }),
  JOB_UNLINKED_TIMEOUT_MS: env.int('a job fails when its WhatsApp account stays unlinked this long', 600_000, { min: 0 }),
  JOB_UNLINKED_RECHECK_MAX_MS: env.int('longest wait between two tries of a job paused because WhatsApp is unlinked', 15_000, { min: 10 }),
  JOB_MAX_RETRIES: env.int('retries of a message after a temporary failure (timeout, WhatsApp service down) before it fails', 3, { min: 0, max: 20 }),
  JOB_RETRY_BASE_MS: env.int('first retry wait after a temporary failure; doubles on each retry', 2000, { min: 1 }),
  JOBS_POLL_MS: env.int('how often a worker looks for accounts with work that no live worker holds', 250, { min: 10 }),
  JOBS_CLAIM_BATCH: env.int('accounts one poll may take over, so replicas share new work', 100, { min: 1 }),
  JOBS_MAX_LANES: env.int('accounts one replica sends for at once', 5000, { min: 1 }),
  JOBS_HEARTBEAT_MS: env.int('how often a worker says it is alive', 1000, { min: 50 }),
  JOBS_WORKER_STALE_MS: env.int('a worker silent this long is taken for dead: its accounts and in-flight sends are taken over', 5000, { min: 200 }),
  JOB_STATUS_LIST_MAX: env.int('newest entries of each result list in a job-status answer (progress always has the full counts)', 2000, { min: 1 }),
  JOB_LOGS_PAGE_MAX: env.int('most log entries in one job-logs answer; the next poll with `since` continues', 500, { min: 1 }),
};
export type JobsEnv = EnvOf<typeof JOBS_ENV> & { RPC_TIMEOUT_MS: number };

export function jobsEnvProblems(e: JobsEnv): string[] {
  return e.JOBS_WORKER_STALE_MS > e.JOBS_HEARTBEAT_MS * 2
    ? []
    : [`JOBS_WORKER_STALE_MS (${e.JOBS_WORKER_STALE_MS}) must be more than twice JOBS_HEARTBEAT_MS (${e.JOBS_HEARTBEAT_MS})`];
}
