import { env, type ServiceEnv } from '@bns/service-kit';
import { CONTACT_EMAIL, WA_ENGINES } from '@bns/contracts';
import { MEDIA_ENV } from '../media/media.env.js';
import { V1_ENV } from '../v1/v1.env.js';

export const GATEWAY_ENV = {
  AUTH_MODE: env.oneOf(
    'clerk: verify Clerk session tokens; dev: the gateway issues its own tokens (local use only)',
    ['clerk', 'dev'] as const,
    'clerk',
  ),
  CLERK_ISSUER: env.optionalStr('Clerk Frontend API URL, the `iss` of its tokens (required with AUTH_MODE=clerk)'),
  CLERK_JWKS_URL: env.optionalStr('Clerk JWKS URL (or set CLERK_JWT_KEY)'),
  CLERK_JWT_KEY: env.optionalStr('Clerk PEM public key, for networkless verification (or set CLERK_JWKS_URL)'),
  CLERK_AUTHORIZED_PARTIES: env.list('origins allowed in the token `azp` claim, comma-separated'),
  AUTH_CLOCK_TOLERANCE_S: env.int('clock skew allowed when checking exp/nbf, seconds', 5, { min: 0, max: 60 }),
  DEV_TOKEN_TTL_S: env.int('lifetime of dev tokens, seconds', 12 * 3600, { min: 60 }),
  RATE_LIMIT_PER_SECOND: env.int(
    'sustained requests per second allowed per user, shared by every gateway replica (NATS KV)',
    10,
    { min: 1 },
  ),
  RATE_LIMIT_BURST: env.int('burst of requests allowed per user before 429', 120, { min: 1 }),
  RATE_LIMIT_LEASE: env.int(
    "requests a replica takes at once from a user's shared budget and spends locally: fewer NATS KV round trips; up to this many minus one may go unused when the user moves to another replica",
    5,
    { min: 1 },
  ),
  BODY_LIMIT: env.str('largest JSON body accepted from a signed-in caller (413 above)', '5mb'),
  PRE_AUTH_BODY_LIMIT: env.str(
    'largest JSON body read before the caller is authenticated (dev sign-in; 413 above)',
    '16kb',
  ),
  AUTH_FAIL_BURST: env.int(
    'failed authentications (bad or missing token, socket handshakes too) allowed per client address before 429',
    30,
    { min: 1 },
  ),
  AUTH_FAIL_PER_MINUTE: env.int('failed authentications per minute a client address earns back after the burst', 30, {
    min: 1,
  }),
  TRUST_PROXY: env.str(
    'which X-Forwarded-For hops to believe for the client address: off, a hop count (1 = one proxy in front), or comma-separated proxy addresses/subnets (loopback, 10.0.0.0/8)',
    'off',
  ),
  TOKEN_CACHE_MAX: env.int(
    'verified tokens kept (until their exp) so a poll does not verify its signature again',
    10_000,
    { min: 0 },
  ),
  JOB_STATUS_CACHE_MS: env.int(
    "how long this replica answers a job-status revalidation (If-None-Match) from memory with a 304 (and a poll without one with the answer it kept, JOB_STATUS_CACHE_BYTES), as long as no event of the job's user came meanwhile (any event forgets the user's entries at once); 0 = every poll asks the jobs service",
    10_000,
    { min: 0 },
  ),
  JOB_STATUS_CACHE_MAX: env.int(
    'job-status versions this replica keeps for JOB_STATUS_CACHE_MS (the oldest go first)',
    50_000,
    { min: 1 },
  ),
  JOB_STATUS_CACHE_BYTES: env.int(
    'bytes of whole job-status answers this replica keeps beside their versions, so a poll without If-None-Match (or with an older one) of an unchanged job gets its 200 from memory too (the oldest learned go first; one answer over a sixteenth of this is not kept); 0 = every such poll asks the jobs service',
    64 * 1024 * 1024,
    { min: 0 },
  ),
  SOCKETS_PER_USER: env.int(
    'open socket.io connections per user on one replica; further handshakes get connect_error "too many connections for this user"',
    10,
    { min: 1 },
  ),
  SOCKET_EVENTS_PER_SECOND: env.int('client events (createSession, connected) per second allowed per socket', 2, {
    min: 1,
  }),
  SOCKET_EVENTS_BURST: env.int('burst of client events allowed per socket before they are refused', 10, { min: 1 }),
  SHED_MAX_IN_FLIGHT: env.int(
    'HTTP requests in progress on this replica above which new ones get 503 + Retry-After',
    512,
    { min: 1 },
  ),
  SHED_READS_MAX_IN_FLIGHT: env.int(
    'reads (GET, HEAD) meet an adaptive limit of requests in progress as well (see SHED_TARGET_MS): its ceiling, where it starts; past it a read gets 503 + Retry-After while writes wait up to SHED_MAX_IN_FLIGHT',
    128,
    { min: 1 },
  ),
  SHED_READS_MIN_IN_FLIGHT: env.int(
    'the adaptive limit reads meet never goes below this (nor is it cut while fewer requests are in progress)',
    32,
    { min: 1 },
  ),
  SHED_TARGET_MS: env.int(
    'queueing (ms) the services behind this replica may add to a request: when even the fastest round trip of a 100 ms window took longer (those still unanswered count too), 3 windows in a row, the limit reads meet is cut (to what is in progress × target / fastest, 50–80% per window), and it grows back 5% a window otherwise; 0 = a fixed SHED_READS_MAX_IN_FLIGHT',
    50,
    { min: 0 },
  ),
  LISTEN_BACKLOG: env.int(
    'connections the HTTP socket queues before accepting them (the kernel caps it at net.core.somaxconn); past it a new connection waits a second for its SYN to be retried',
    4096,
    { min: 1 },
  ),
  SHED_MAX_LAG_MS: env.int(
    'event-loop lag (ms, smoothed over the last few 50 ms ticks) above which new HTTP requests get 503 + Retry-After',
    500,
    { min: 10 },
  ),
  SLOW_REQUEST_MS: env.int('requests slower than this are logged at info (others only at debug; errors always)', 1000, {
    min: 0,
  }),
  DEV_ISSUER_KEY_FILE: env.optionalStr(
    'dev issuer: file holding its signing key, so tokens survive a restart (npm start uses $BNS_DATA_DIR/dev-issuer-key.json; unset = a new key each start)',
  ),
  WEB_DIST: env.optionalStr('folder of the built web app to serve (default: web/dist of the repository when present)'),
  WA_ENGINE: env.oneOf(
    'WhatsApp engine of the sessions service; the dev-only /dev/simulator calls exist only with AUTH_MODE=dev and the simulated engine',
    WA_ENGINES,
    'simulated',
  ),
  CORS_ORIGINS: env.list(
    'origins allowed to call the API and open sockets from another origin, comma-separated (same-origin needs none)',
  ),
  DONATION_URL: env.optionalStr(
    "http(s) page the web app's donation links open; unset = the donation texts show without a link",
  ),
  SUPPORT_EMAIL: env.str('contact address the landing page and the header show', CONTACT_EMAIL),
  // Campaign results: large personalised starts.
  START_BODY_LIMIT: env.str(
    'largest JSON body of POST /start-bulk-messages (a 50,000-row personalised job is about 8 MB); every other call keeps BODY_LIMIT',
    '32mb',
  ),
  // The /v1 API (API keys): its rate limit and body size.
  ...V1_ENV,
  ...MEDIA_ENV,
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Problems with the texts the web app links to, named by variable: a link the web shows must lead somewhere. */
export function publicConfigEnvProblems(e: Pick<GatewayEnv, 'DONATION_URL' | 'SUPPORT_EMAIL'>): string[] {
  const problems: string[] = [];
  if (e.DONATION_URL !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(e.DONATION_URL).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'https:' && protocol !== 'http:')
      problems.push(`DONATION_URL must be an http(s) URL, got "${e.DONATION_URL}"`);
  }
  if (!EMAIL.test(e.SUPPORT_EMAIL.trim()))
    problems.push(`SUPPORT_EMAIL must be an e-mail address, got "${e.SUPPORT_EMAIL}"`);
  return problems;
}

/** The gateway's whole env (its own variables and the common ones), as SERVICE_ENV provides it. */
export type GatewayEnv = ServiceEnv<typeof GATEWAY_ENV>;

/** Dev-only routes (/dev/simulator/*) exist only for local runs: dev sign-in and the simulated engine. */
export function devRoutesEnabled(env: Pick<GatewayEnv, 'AUTH_MODE' | 'WA_ENGINE'>): boolean {
  return env.AUTH_MODE === 'dev' && env.WA_ENGINE === 'simulated';
}
