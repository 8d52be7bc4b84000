import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError, PUBLIC_ROUTE } from '@bns/service-kit';
import type { AuthedRequest, AuthUser } from './auth.types.js';
import { bearerToken, TokenVerifier } from './token-verifier.js';

export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');

/**
 * Every HTTP route needs a valid bearer token unless marked @Public(). A user id in the path
 * (`:userId`) or body (`clerkUserId`) must be the token's subject: users act only on their own data.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [ctx.getHandler(), ctx.getClass()])) return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const user = await this.verifier.verify(bearerToken(req.headers.authorization));
    req.user = user;
    assertActsAsSelf(req, user);
    return true;
  }
}

function assertActsAsSelf(req: AuthedRequest, user: AuthUser): void {
  const claimed = [req.params?.userId, (req.body as { clerkUserId?: unknown } | undefined)?.clerkUserId];
  for (const id of claimed) {
    if (id !== undefined && id !== user.userId) {
      throw new AppError(ErrorKind.Forbidden, CommonErrorCode.Forbidden, MESSAGES.forbidden);
    }
  }
}
