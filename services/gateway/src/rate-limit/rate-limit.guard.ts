import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthedRequest } from '../auth/auth.types.js';
import { SharedRateLimiter, type Verdict } from './shared-rate-limiter.js';

const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

/** A signed-in user's key in the shared limiter (before sign-in: `ip-<address>`). */
export const userLimitKey = (userId: string): string => `user-${userId}`;

/**
 * Per-user limit (per client address before sign-in), shared by every gateway replica; past it, 429
 * with Retry-After.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(@Inject(SharedRateLimiter) private readonly limiter: SharedRateLimiter) {}

  canActivate(ctx: ExecutionContext): boolean | Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    if (UNLIMITED.has(req.path)) return true;
    const key = req.user ? userLimitKey(req.user.userId) : `ip-${req.ip}`;
    // A request this replica leased earlier from the shared budget is decided in this turn.
    if (this.limiter.spendLeased(key)) return true;
    return this.limiter.take(key).then(admit);
  }
}

function admit(verdict: Verdict): true {
  if (!verdict.allowed) {
    throw new AppError(ErrorKind.RateLimited, CommonErrorCode.RateLimited, MESSAGES.rateLimited, {
      details: { retryAfterSeconds: verdict.retryAfterSeconds },
    });
  }
  return true;
}
