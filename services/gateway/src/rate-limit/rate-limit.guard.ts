import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import type { AuthedRequest } from '../auth/auth.types.js';
import type { GatewayEnv } from '../config/env.js';
import { RateLimiter } from './rate-limiter.js';

const UNLIMITED = new Set(['/healthz', '/readyz']);

/** Per-user limit (per client address before sign-in); past it, 429 with Retry-After. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limiter: RateLimiter;

  constructor(@Inject(SERVICE_ENV) env: GatewayEnv) {
    this.limiter = new RateLimiter(env.RATE_LIMIT_PER_SECOND, env.RATE_LIMIT_BURST);
  }

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    if (UNLIMITED.has(req.path)) return true;
    const key = req.user ? `user:${req.user.userId}` : `ip:${req.ip}`;
    const verdict = this.limiter.take(key);
    if (!verdict.allowed) {
      throw new AppError(ErrorKind.RateLimited, CommonErrorCode.RateLimited, MESSAGES.rateLimited, {
        details: { retryAfterSeconds: verdict.retryAfterSeconds },
      });
    }
    return true;
  }
}
