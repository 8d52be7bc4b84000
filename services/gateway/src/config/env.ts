import { env, type EnvOf } from '@bns/service-kit';
import { WA_ENGINES } from '@bns/contracts';

export const GATEWAY_ENV = {
  AUTH_MODE: env.oneOf('clerk: verify Clerk session tokens; dev: the gateway issues its own tokens (local use only)', ['clerk', 'dev'] as const, 'clerk'),
  CLERK_ISSUER: env.optionalStr('Clerk Frontend API URL, the `iss` of its tokens (required with AUTH_MODE=clerk)'),
  CLERK_JWKS_URL: env.optionalStr('Clerk JWKS URL (or set CLERK_JWT_KEY)'),
  CLERK_JWT_KEY: env.optionalStr('Clerk PEM public key, for networkless verification (or set CLERK_JWKS_URL)'),
  CLERK_AUTHORIZED_PARTIES: env.list('origins allowed in the token `azp` claim, comma-separated'),
  AUTH_CLOCK_TOLERANCE_S: env.int('clock skew allowed when checking exp/nbf, seconds', 5, { min: 0, max: 60 }),
  DEV_TOKEN_TTL_S: env.int('lifetime of dev tokens, seconds', 12 * 3600, { min: 60 }),
  RATE_LIMIT_PER_SECOND: env.int('sustained requests per second allowed per user (per gateway replica)', 10, { min: 1 }),
  RATE_LIMIT_BURST: env.int('burst of requests allowed per user before 429', 120, { min: 1 }),
  BODY_LIMIT: env.str('largest JSON body accepted (413 above)', '5mb'),
  WEB_DIST: env.optionalStr('folder of the built web app to serve (default: web/dist of the repository when present)'),
  WA_ENGINE: env.oneOf('WhatsApp engine of the sessions service; the dev-only /dev/simulator calls answer 404 unless it is simulated', WA_ENGINES, 'simulated'),
  CORS_ORIGINS: env.list('origins allowed to call the API from another origin, comma-separated (same-origin needs none)'),
};

export type GatewayEnv = EnvOf<typeof GATEWAY_ENV>;
