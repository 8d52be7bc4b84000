import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { GatewayEnv } from '../config/env.js';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard.js';
import { AuthGuard, TOKEN_VERIFIER } from './auth.guard.js';
import { DevAuthController } from './dev-auth.controller.js';
import { DEV_ISSUER, DevIssuer } from './dev-issuer.js';
import { TokenVerifier, type VerifierOptions } from './token-verifier.js';

/** Problems with the auth settings, named by variable (checked before anything starts). */
export function authEnvProblems(env: GatewayEnv): string[] {
  if (env.AUTH_MODE !== 'clerk') return [];
  const problems: string[] = [];
  if (!env.CLERK_ISSUER) problems.push('CLERK_ISSUER is required when AUTH_MODE=clerk (set AUTH_MODE=dev for local use)');
  if (!env.CLERK_JWKS_URL && !env.CLERK_JWT_KEY) problems.push('CLERK_JWKS_URL or CLERK_JWT_KEY is required when AUTH_MODE=clerk');
  return problems;
}

@Module({})
export class AuthModule {
  static forRoot(env: GatewayEnv): DynamicModule {
    const options = (issuer: string): VerifierOptions => ({
      issuer,
      authorizedParties: env.CLERK_AUTHORIZED_PARTIES,
      clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
    });
    const dev = env.AUTH_MODE === 'dev';
    const providers: Provider[] = dev
      ? [
          { provide: DevIssuer, useFactory: () => DevIssuer.create(env.DEV_TOKEN_TTL_S) },
          { provide: TOKEN_VERIFIER, useFactory: (issuer: DevIssuer) => TokenVerifier.fromJwks(issuer.jwks, options(DEV_ISSUER)), inject: [DevIssuer] },
        ]
      : [
          {
            provide: TOKEN_VERIFIER,
            useFactory: () =>
              env.CLERK_JWT_KEY
                ? TokenVerifier.fromPem(env.CLERK_JWT_KEY, options(env.CLERK_ISSUER!))
                : TokenVerifier.fromJwksUrl(env.CLERK_JWKS_URL!, options(env.CLERK_ISSUER!)),
          },
        ];
    return {
      module: AuthModule,
      global: true,
      controllers: dev ? [DevAuthController] : [],
      providers: [
        ...providers,
        // Guards run in this order: who you are, then how fast you may go.
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
      exports: [TOKEN_VERIFIER],
    };
  }
}
