import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { DEV_SIGNED_OUT_SUBJECT, DevSignedOutNoticeSchema } from '@bns/contracts';
import { NATS_CONNECTION, noticeOf } from '@bns/service-kit';
import { TOKEN_VERIFIER } from './auth.guard.js';
import type { AuthUser } from './auth.types.js';
import type { TokenVerifier } from './token-verifier.js';

/**
 * Dev sign-out: the session's tokens are refused here at once and, through a core NATS notice, on
 * every other gateway replica (each remembers it until the tokens would have expired). A replica that
 * was down when the notice went out does not hear it; dev tokens are for local runs.
 */
@Injectable()
export class DevSignOuts implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('DevSignOuts');
  private subscription?: Subscription;

  constructor(
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  onModuleInit(): void {
    this.subscription = this.nc.subscribe(DEV_SIGNED_OUT_SUBJECT, {
      callback: (err, msg) => {
        const notice = err ? undefined : noticeOf(msg, DevSignedOutNoticeSchema);
        if (notice) this.verifier.signOut(notice.sessionId, notice.expiresAtMs);
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** Signs the caller's session out; false when its token names no session (nothing to sign out by). */
  signOut(user: AuthUser): boolean {
    if (user.sessionId === undefined) return false;
    this.verifier.signOut(user.sessionId, user.expiresAtMs);
    try {
      this.nc.publish(
        DEV_SIGNED_OUT_SUBJECT,
        JSON.stringify({ sessionId: user.sessionId, expiresAtMs: user.expiresAtMs }),
      );
    } catch (err) {
      // This replica refuses the session already; the others may still accept it until it expires.
      this.logger.warn({ err }, 'could not tell the other gateway replicas of a sign-out');
    }
    return true;
  }
}
