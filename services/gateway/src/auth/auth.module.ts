import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { GatewayEnv } from '../config/env.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { SessionSignIns } from '../audit/session-sign-ins.js';
import { BodySizeGuard } from '../http/body-size.js';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard.js';
import { SharedRateLimiter } from '../rate-limit/shared-rate-limiter.js';
import { AuthFailures } from './auth-failures.js';
import { AuthGuard, TOKEN_VERIFIER } from './auth.guard.js';
import { DevAuthController } from './dev-auth.controller.js';
import { DEV_ISSUER, DevIssuer } from './dev-issuer.js';
import { DevSignOuts } from './dev-sign-outs.js';
import { TokenVerifier, type VerifierOptions } from './token-verifier.js';

/** Problems with the auth settings, named by variable (checked before anything starts). */
export function authEnvProblems(env: GatewayEnv): string[] {
  if (env.AUTH_MODE !== 'clerk') return [];
  const problems: string[] = [];
  if (!env.CLERK_ISSUER)
    problems.push('CLERK_ISSUER is required when AUTH_MODE=clerk (set AUTH_MODE=dev for local use)');
  if (!env.CLERK_JWKS_URL && !env.CLERK_JWT_KEY)
    problems.push('CLERK_JWKS_URL or CLERK_JWT_KEY is required when AUTH_MODE=clerk');
  return problems;
}

/** What tokens are checked against, for the start-up log and /readyz (no secrets: a PEM is named, not shown). */
export interface AuthSource {
  mode: GatewayEnv['AUTH_MODE'];
  issuer: string;
  keySource: string;
  authorizedParties: readonly string[];
}

export function authSource(env: GatewayEnv): AuthSource {
  if (env.AUTH_MODE === 'dev') {
    const key = env.DEV_ISSUER_KEY_FILE
      ? 'dev issuer key kept in DEV_ISSUER_KEY_FILE (made on the first start)'
      : 'dev issuer key made at start';
    return {
      mode: 'dev',
      issuer: DEV_ISSUER,
      keySource: `${key} (JWKS at /auth/dev/.well-known/jwks.json)`,
      authorizedParties: [],
    };
  }
  return {
    mode: 'clerk',
    issuer: env.CLERK_ISSUER ?? '',
    keySource: env.CLERK_JWT_KEY
      ? 'CLERK_JWT_KEY (PEM public key, networkless)'
      : `CLERK_JWKS_URL ${env.CLERK_JWKS_URL ?? ''}`,
    authorizedParties: env.CLERK_AUTHORIZED_PARTIES,
  };
}

/** One line a deployer can grep for: "auth: clerk tokens from https://… checked with CLERK_JWKS_URL …". */
export function describeAuthSource(source: AuthSource): string {
  const parties =
    source.authorizedParties.length > 0 ? source.authorizedParties.join(', ') : 'any (CLERK_AUTHORIZED_PARTIES unset)';
  return `auth: ${source.mode} tokens, issuer ${source.issuer}, keys from ${source.keySource}, azp allowed: ${source.mode === 'dev' ? 'not checked' : parties}`;
}

@Module({})
export class AuthModule {
  static forRoot(env: GatewayEnv): DynamicModule {
    const options = (issuer: string): VerifierOptions => ({
      issuer,
      authorizedParties: env.CLERK_AUTHORIZED_PARTIES,
      clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
      cacheMax: env.TOKEN_CACHE_MAX,
    });
    const dev = env.AUTH_MODE === 'dev';
    const providers: Provider[] = dev
      ? [
          { provide: DevIssuer, useFactory: () => DevIssuer.create(env.DEV_TOKEN_TTL_S, env.DEV_ISSUER_KEY_FILE) },
          {
            provide: TOKEN_VERIFIER,
            useFactory: (issuer: DevIssuer) => TokenVerifier.fromJwks(issuer.jwks, options(DEV_ISSUER)),
            inject: [DevIssuer],
          },
          DevSignOuts,
        ]
      : [
          {
            provide: TOKEN_VERIFIER,
            useFactory: () =>
              env.CLERK_JWT_KEY
                ? TokenVerifier.fromPem(env.CLERK_JWT_KEY, options(env.CLERK_ISSUER!))
                : TokenVerifier.fromJwksUrl(env.CLERK_JWKS_URL!, options(env.CLERK_ISSUER!)),
          },
          SessionSignIns,
        ];
    return {
      module: AuthModule,
      global: true,
      controllers: dev ? [DevAuthController] : [],
      providers: [
        ...providers,
        {
          provide: SharedRateLimiter,
          useFactory: (nc: NatsConnection, rpc: RpcClient) =>
            SharedRateLimiter.open(nc, rpc, env.RATE_LIMIT_PER_SECOND, env.RATE_LIMIT_BURST, env.RATE_LIMIT_LEASE),
          inject: [NATS_CONNECTION, RpcClient],
        },
        { provide: AuthFailures, useValue: new AuthFailures(env.AUTH_FAIL_BURST, env.AUTH_FAIL_PER_MINUTE) },
        // Guards run in this order: who you are, then how fast you may go, then whether the body fits.
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: BodySizeGuard },
      ],
      exports: [TOKEN_VERIFIER, AuthFailures],
    };
  }
}
