import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError, PUBLIC_ROUTE } from '@bns/service-kit';
import { SessionSignIns } from '../audit/session-sign-ins.js';
import { AuthFailures } from './auth-failures.js';
import type { AuthedRequest, AuthUser } from './auth.types.js';
import { unauthorized } from './token-verifier.js';

export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');

/**
 * Every HTTP route needs a valid bearer token unless marked @Public(). The token was already checked
 * by the authenticate middleware (before the body was read); here a route without a verified user is
 * a 401, counted against the client address. A user id in the path (`:userId`) or body
 * (`clerkUserId`) must be the token's subject: users act only on their own data.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AuthFailures) private readonly failures: AuthFailures,
    /** Clerk only: the first token of each session is its sign-in in the audit log. */
    @Optional() @Inject(SessionSignIns) private readonly signIns?: SessionSignIns,
  ) {}

  /** @Public() per controller class and handler, read once (metadata is fixed once the app is up). */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() !== 'http') return true;
    if (this.isPublic(ctx)) return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const user = req.user;
    if (!user) {
      const address = req.ip ?? 'unknown';
      if (req.authError === undefined) {
        // A bad token was counted by the middleware already; a missing one is counted here.
        const blocked = this.failures.blocked(address);
        if (blocked) throw blocked;
        this.failures.record(address);
      }
      throw req.authError ?? unauthorized('missing token');
    }
    assertActsAsSelf(req, user);
    this.signIns?.saw(user, req.ip);
    return true;
  }

  private isPublic(ctx: ExecutionContext): boolean {
    const handler = ctx.getHandler();
    const controller = ctx.getClass();
    let byHandler = this.publicRoutes.get(controller);
    if (!byHandler) this.publicRoutes.set(controller, (byHandler = new WeakMap()));
    let isPublic = byHandler.get(handler);
    if (isPublic === undefined) {
      isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [handler, controller]) === true;
      byHandler.set(handler, isPublic);
    }
    return isPublic;
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
