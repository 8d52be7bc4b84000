import { env, secretKeyProblem, type EnvOf, type EnvVar } from '@bns/service-kit';
import { LIMITS, MEDIA_LIMITS, WA_ENGINES } from '@bns/contracts';

/** A share from 0 to 1 (a decimal number). */
function shareOfOne(doc: string, defaultValue: number): EnvVar<number> {
  return {
    doc,
    defaultValue,
    parse: (raw) => {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
        throw new Error(`must be a number from 0 to 1, got "${raw}"`);
      return n;
    },
  };
}

export const SESSIONS_ENV = {
  SHARD_INDEX: env.int(
    'which sessions shard this replica is, 0 ≤ SHARD_INDEX < SESSIONS_SHARDS (the StatefulSet ordinal)',
    0,
    { min: 0 },
  ),
  WA_ENGINE: env.oneOf(
    'WhatsApp engine: webjs (whatsapp-web.js + Chromium) or simulated (offline stand-in for local runs and tests)',
    WA_ENGINES,
    'simulated',
  ),
  RESTORE_CONCURRENCY: env.int(
    'stored links restored side by side at start (each webjs restore launches a Chromium)',
    4,
    { min: 1, max: 256 },
  ),
  MEDIA_CACHE_BYTES: env.int(
    "bytes of attachments a shard keeps in memory to send a job's recipients from (each file is fetched from the object store once, then shared)",
    MEDIA_LIMITS.defaultSessionsCacheBytes,
    { min: 0 },
  ),
  SEND_TIMEOUT_MS: env.int(
    'longest wait for the engine to send one message; past it the message is recorded as unconfirmed and never sent again for its key (keep it well under the 120 s after which a send claim counts as abandoned)',
    45_000,
    { min: 1000, max: 90_000 },
  ),
  SESSIONS_LEDGER_BATCH: env.int(
    'most sends written by one send-ledger statement: sends that arrive while every statement of their kind (claim, sent mark, simulated store) is busy share the next one, one commit for many; 1 = each send its own statements, at once',
    100,
    { min: 1, max: 1000 },
  ),
  SESSIONS_LEDGER_STATEMENTS: env.int(
    'with SESSIONS_LEDGER_BATCH above 1: statements of each kind (claim, sent mark, simulated store) in flight at once, each on one of the DATABASE_POOL_SIZE connections; keep 3 × this well under the pool, which serves every other query too; 1 (one at a time, the others gather behind it) gave the fewest commits and the most messages per second, with pacing as exact',
    1,
    { min: 1, max: 50 },
  ),
  AUTO_LOGIN_PREF_TIMEOUT_MS: env.int(
    'how long to wait for dashboard.preferences.get before assuming the auto-login message is enabled',
    1500,
    { min: 50 },
  ),
  // Simulated engine
  SIM_QR_INTERVAL_MS: env.int(
    'simulated engine: a new QR code is issued this often, like WhatsApp Web (about 20 s)',
    20_000,
    { min: 10 },
  ),
  SESSION_STATE_KEY: env.str(
    "key that seals every engine's stored WhatsApp login at rest (AES-256-GCM): 32 random bytes, base64 or hex (`openssl rand -base64 32`); keep it in a secret store. A key that does not open the stored logins stops the shard at start (nobody is unlinked); to rotate, set the new key here and the old one in SESSION_STATE_KEY_PREVIOUS: every login is sealed again at start. npm start makes one in .data/ when unset; the chart keeps it in a Secret",
  ),
  SESSION_STATE_KEY_PREVIOUS: env.list(
    'previous SESSION_STATE_KEY values (comma-separated) during a rotation: stored logins sealed under them are opened and sealed again under SESSION_STATE_KEY at start; remove them once every shard has started with the new key',
  ),
  PAIRING_CODE_REFRESH_MS: env.int(
    'linking by phone number: a new pairing code replaces the one showing this often (WhatsApp Web: every 3 minutes); the webjs engine passes it to whatsapp-web.js',
    LIMITS.pairingCodeRefreshMs,
    { min: 100 },
  ),
  SIM_READY_DELAY_MS: env.int('simulated engine: time between a scan (authenticated) and ready', 300, { min: 0 }),
  SIM_AUTO_SCAN_MS: env.int(
    'simulated engine: scan the QR by itself after this long (0 = only POST /dev/simulator/scan links)',
    0,
    { min: 0 },
  ),
  SIM_FAIL_NUMBERS: env.list(
    'simulated engine: numbers (digits, with or without 852) that are "not on WhatsApp", comma-separated',
  ),
  SIM_FAIL_MEDIA_NUMBERS: env.list(
    'simulated engine: numbers (digits, with or without 852) to which a message with an attachment fails as an upload WhatsApp did not take, comma-separated',
  ),
  SIM_REFUSE_NUMBERS: env.list(
    'simulated engine: numbers (digits, with or without 852) whose sends WhatsApp accepts and then refuses with an error ack within 1 s, comma-separated',
  ),
  SIM_UNREAD_NUMBERS: env.list(
    'simulated engine: numbers (digits, with or without 852) that get messages delivered but never read them, comma-separated',
  ),
  SIM_REFUSE_DELAY_MS: env.int(
    'simulated engine: delay of the refusal (error ack) after an accepted send to a SIM_REFUSE_NUMBERS number',
    200,
    { min: 0, max: 1000 },
  ),
  SIM_LID_SHARE: shareOfOne(
    'simulated engine: share (0 to 1) of inbound messages and receipts that name the contact by LID only (`<digits>@lid`, no number), as WhatsApp does more and more',
    0,
  ),
  SIM_DELIVERED_DELAY_MS: env.int('simulated engine: delay of the delivered ack after a send', 1000, { min: 0 }),
  SIM_RATE_LIMIT_AFTER: env.int(
    "simulated engine: after this many sends the phone answers the next one with WhatsApp's rate-overlimit, then counts again (0 = never)",
    0,
    { min: 0 },
  ),
  SIM_READ_DELAY_MS: env.int('simulated engine: delay of the read ack after a send', 3000, { min: 0 }),
  // whatsapp-web.js engine
  CHROMIUM_PATH: env.str(
    'webjs engine: the Chromium puppeteer launches (browser download is skipped at install)',
    '/usr/bin/chromium',
  ),
  WEBJS_DATA_PATH: env.str(
    'webjs engine: local folder for the browser profiles RemoteAuth unpacks (scratch; the truth is in Postgres)',
    '.wwebjs_auth',
  ),
  WEBJS_BACKUP_SYNC_MS: env.int(
    'webjs engine: RemoteAuth backs the profile up to Postgres this often (≥ 60000)',
    300_000,
    { min: 60_000 },
  ),
  WEBJS_AUTH_MAX_BYTES: env.int(
    'webjs engine: largest profile zip stored; bigger backups are refused and the previous one kept',
    64 * 1024 * 1024,
    { min: 1024 },
  ),
  WEBJS_SERVER_ACK_TIMEOUT_MS: env.int(
    "webjs engine: a sent message WhatsApp's server has not acknowledged after this long is failed (not delivered), never counted as sent",
    120_000,
    { min: 1000 },
  ),
  WEBJS_HEADLESS: env.bool('webjs engine: run Chromium headless', true),
  WEBJS_START_TIMEOUT_MS: env.int(
    'webjs engine: launch deadline, until the first QR (or ready, for a restore); past it the browser is closed and the start reported failed',
    90_000,
    { min: 1000 },
  ),
  WEBJS_LINK_TIMEOUT_MS: env.int(
    'webjs engine: how long a QR may wait for its scan; past it the browser is closed and the user sees qr_max_attempts',
    180_000,
    { min: 1000 },
  ),
  WEBJS_AUTH_TIMEOUT_MS: env.int(
    'webjs engine: deadline from the scan (or a restore start) to ready, history sync included; past it the browser is closed and the link reported failed',
    180_000,
    { min: 1000 },
  ),
};
export type SessionsEnv = EnvOf<typeof SESSIONS_ENV> & { SESSIONS_SHARDS: number };

/** SESSION_STATE_KEY and each previous key must be 32 bytes of base64 or hex. */
export function stateKeyProblems(env: Pick<SessionsEnv, 'SESSION_STATE_KEY' | 'SESSION_STATE_KEY_PREVIOUS'>): string[] {
  return [
    secretKeyProblem(env.SESSION_STATE_KEY, 'SESSION_STATE_KEY'),
    ...env.SESSION_STATE_KEY_PREVIOUS.map((k) => secretKeyProblem(k, 'SESSION_STATE_KEY_PREVIOUS')),
  ].filter((p): p is string => p !== undefined);
}

export function shardProblems(env: SessionsEnv): string[] {
  return env.SHARD_INDEX < env.SESSIONS_SHARDS
    ? []
    : [`SHARD_INDEX must be < SESSIONS_SHARDS (${env.SESSIONS_SHARDS}), got ${env.SHARD_INDEX}`];
}
