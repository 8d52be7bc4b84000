import {
  DEFAULT_BACKOFF_MS,
  LIMITS,
  MEDIA_LIMITS,
  OPT_OUT_LIMITS,
  POLICY_LIMITS,
  RESULTS_LIMITS,
} from '@bns/contracts';
import { env, type EnvOf } from '@bns/service-kit';

/** The jobs service's own variables (beyond the common and database ones of service-kit). */
export const JOBS_ENV = {
  SEND_DELAY_MS: env.int(
    'pause between two messages of one account (per user, across all jobs and replicas)',
    LIMITS.defaultSendDelayMs,
    { min: 0 },
  ),
  SEND_JITTER_MS: env.int(
    'random extra pause, 0 to this many ms, added to each SEND_DELAY_MS (looks less like a bot)',
    0,
    { min: 0 },
  ),
  MAX_RECIPIENTS_PER_JOB: env.int(
    'largest job accepted, after duplicates are merged (400 above)',
    LIMITS.defaultMaxRecipientsPerJob,
    { min: 1 },
  ),
  JOB_UNLINKED_TIMEOUT_MS: env.int('a job fails when its WhatsApp account stays unlinked this long', 600_000, {
    min: 0,
  }),
  JOB_UNLINKED_RECHECK_MAX_MS: env.int(
    'longest wait between two tries of a job paused because WhatsApp is unlinked',
    15_000,
    { min: 10 },
  ),
  JOB_MAX_RETRIES: env.int(
    'retries of a message after a temporary failure (an engine or service error) before it fails; while the WhatsApp service does not answer at all, the message waits without using them',
    3,
    { min: 0, max: 20 },
  ),
  JOB_RETRY_BASE_MS: env.int('first retry wait after a temporary failure; doubles on each retry', 2000, { min: 1 }),
  JOBS_POLL_MS: env.int(
    'how often a worker looks for accounts with work due within this plus JOBS_SEND_LEAD_MS that no live worker holds (at once again after a poll that took a whole JOBS_CLAIM_BATCH)',
    250,
    { min: 10 },
  ),
  JOBS_CLAIM_BATCH: env.int(
    'accounts one poll may take over, so replicas share new work (a poll that took this many looks again at once, so accounts due together all start on time)',
    100,
    { min: 1 },
  ),
  JOBS_MAX_LANES: env.int('accounts one replica sends for at once', 5000, { min: 1 }),
  JOBS_STEP_BATCH: env.int(
    'lane steps of different accounts that may share one database transaction: a step goes alone while one of JOBS_STEP_TRANSACTIONS is free, and steps that come due while all are busy share the next (one commit for many); 1 = each step its own transaction',
    50,
    { min: 1, max: 500 },
  ),
  JOBS_STEP_TRANSACTIONS: env.int(
    'with JOBS_STEP_BATCH above 1: batched lane-step transactions one replica runs at once (each holds one of its DATABASE_POOL_SIZE connections); fewer and fuller transactions cost Postgres less per message, and with 2 pacing stayed within tens of milliseconds at 2,000 accounts',
    2,
    { min: 1, max: 50 },
  ),
  JOBS_SEND_LEAD_MS: env.int(
    'a lane prepares its next send (takes the recipient, books the slot) this long before the slot and sends on the slot itself, so the database work is not added to the gap; a cancel, a pause or an opt-out of the recipient before the slot still withholds it; 0 = prepare on the slot',
    250,
    { min: 0, max: 2000 },
  ),
  JOBS_STEP_GATHER_MS: env.int(
    "a lane step taken ahead of its slot (JOBS_SEND_LEAD_MS) may wait up to this long for the steps of other accounts to share its transaction (at most half the lead, never past the slot), and so may a sent message's record in the sessions ledger (at most 100 ms): at the spec's pace, steps come a few milliseconds apart, and each alone pays its own commit, round trips and query planning; 0 = never wait",
    20,
    { min: 0, max: 500 },
  ),
  JOBS_PROGRESS_EVERY_MS: env.int(
    'a running job whose next message follows at once (no pause: SEND_DELAY_MS=0) reports its progress at most this often, each report with the whole counts; a stop, pause, failure or the end, and the send before any pause, are always reported',
    250,
    { min: 0, max: 5000 },
  ),
  JOBS_HEARTBEAT_MS: env.int('how often a worker says it is alive', 1000, { min: 50 }),
  JOBS_WORKER_STALE_MS: env.int(
    'a worker silent this long is taken for dead: its accounts and in-flight sends are taken over (≤ this + JOBS_POLL_MS after a crash)',
    4000,
    { min: 200 },
  ),
  JOB_STATUS_LIST_MAX: env.int(
    'newest entries of each result list in a job-status answer (progress always has the full counts)',
    2000,
    { min: 1 },
  ),
  POLICY_MIN_DELAY_MS: env.int(
    'floor of a sending policy gap (delayMs) users may set; lower it only for tests and demos',
    POLICY_LIMITS.minDelayMs,
    { min: 0 },
  ),
  JOB_BACKOFF_MS: env.list(
    'pauses after WhatsApp pushes back (rate-overlimit), ms, comma-separated; each hit within a day takes the next one',
    DEFAULT_BACKOFF_MS.map(String),
  ),
  JOB_BACKOFF_AFTER_FAILURES: env.int(
    'consecutive engine failures (no verdict on the number) taken as WhatsApp pushing back',
    3,
    { min: 1 },
  ),
  JOB_LOGS_PAGE_MAX: env.int('most log entries in one job-logs answer; the next poll with `since` continues', 500, {
    min: 1,
  }),
  // Idempotent starts, per-user caps and the results report.
  JOBS_MAX_ACTIVE_PER_USER: env.int(
    'most jobs one user may have queued, scheduled, running or paused at once (429 above)',
    RESULTS_LIMITS.defaultMaxActiveJobs,
    { min: 1 },
  ),
  JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: env.int(
    'most recipients one user may have waiting to be sent across active jobs (429 above)',
    RESULTS_LIMITS.defaultMaxQueuedRecipients,
    { min: 1 },
  ),
  // 1,000 starts at once on 2 cores (job-starts benchmark): 4 accepted them all about a fifth sooner
  // than 2, each start's own p99 staying under 100 ms; 6 was barely faster and went over it.
  JOBS_START_CONCURRENCY: env.int(
    "job starts one replica stores at once (one user's starts always go one at a time), so a burst leaves database connections for everyone else",
    4,
    { min: 1 },
  ),
  JOBS_RESULTS_CONSUMER: env.str(
    'prefix of the durable JetStream consumers that fold receipts and replies into the report (one per event subject)',
    'jobs-results',
  ),
  // Opt-outs: recipients the account must not send to
  NOT_ON_WHATSAPP_MEMORY_DAYS: env.int(
    'days a number WhatsApp said it does not know is skipped by later jobs without asking WhatsApp again',
    OPT_OUT_LIMITS.notOnWhatsAppDays,
    { min: 0, max: 3650 },
  ),
  MEDIA_RETENTION_DAYS: env.int(
    'days an attachment that no active job, template or scheduled message holds is kept after its last use; then its file and record are deleted',
    MEDIA_LIMITS.defaultRetentionDays,
    { min: 1, max: 3650 },
  ),
  MEDIA_SWEEP_MS: env.int('how often the attachments clean-up runs (0 = never)', 3_600_000, { min: 0 }),
  RETENTION_PURGE_EVERY_MS: env.int(
    "how often campaign details (message text, variables, per-recipient rows) past each user's retention are removed, ms (0 = never)",
    86_400_000,
    { min: 0 },
  ),
  OPT_OUTS_CONSUMER: env.str(
    'name of the durable JetStream consumer that reads inbound messages for opt-out keywords',
    'jobs-opt-outs',
  ),
  OPT_OUTS_ACK_WAIT_MS: env.int(
    'how long JetStream waits for an ack of an inbound message before redelivering it (after a crash, messages in flight wait this long), ms',
    10_000,
    { min: 100 },
  ),
  OPT_OUTS_MAX_DELIVER: env.int(
    'deliveries of an inbound message that keeps failing before it is dropped (and logged)',
    20,
    { min: 1 },
  ),
};
export type JobsEnv = EnvOf<typeof JOBS_ENV> & { RPC_TIMEOUT_MS: number };

export function jobsEnvProblems(e: JobsEnv): string[] {
  const problems: string[] = [];
  if (e.JOBS_WORKER_STALE_MS <= e.JOBS_HEARTBEAT_MS * 2) {
    problems.push(
      `JOBS_WORKER_STALE_MS (${e.JOBS_WORKER_STALE_MS}) must be more than twice JOBS_HEARTBEAT_MS (${e.JOBS_HEARTBEAT_MS})`,
    );
  }
  if (e.JOB_BACKOFF_MS.length === 0 || e.JOB_BACKOFF_MS.some((v) => !/^\d+$/.test(v) || Number(v) < 1)) {
    problems.push(
      `JOB_BACKOFF_MS must be positive whole numbers of ms, comma-separated (got "${e.JOB_BACKOFF_MS.join(',')}")`,
    );
  }
  return problems;
}

/** JOB_BACKOFF_MS as numbers. */
export function backoffStepsMs(e: JobsEnv): number[] {
  return e.JOB_BACKOFF_MS.map(Number);
}
