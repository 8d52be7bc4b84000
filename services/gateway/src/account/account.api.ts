import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  ACCOUNT_MESSAGES,
  AccountErrorCode,
  type DeletionStarted,
  type DeletionStatus,
  type Retention,
} from '@bns/contracts';
import { AppError, RpcClient, UserDeletions } from '@bns/service-kit';
import { TOKEN_VERIFIER } from '../auth/auth.guard.js';
import type { AuthUser } from '../auth/auth.types.js';
import type { TokenVerifier } from '../auth/token-verifier.js';

/**
 * The account calls: deleting the account (after the e-mail check), its progress, the retention
 * setting. Installs the deletion check in the token verifier: a token issued before the account's
 * deletion is refused from the moment the deletion is requested, on every gateway replica (the
 * deletions bucket), while a later sign-in with the same e-mail works and finds an empty account.
 */
@Injectable()
export class AccountApi implements OnModuleInit {
  constructor(
    private readonly rpc: RpcClient,
    @Inject(UserDeletions) private readonly deletions: UserDeletions,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
  ) {}

  onModuleInit(): void {
    this.verifier.refuseWhen((user) => this.deletions.revokes(user.userId, user.issuedAtS));
  }

  async delete(user: AuthUser, email: string): Promise<DeletionStarted> {
    if (!user.email)
      throw AppError.validation(AccountErrorCode.EmailUnknown, ACCOUNT_MESSAGES.emailUnknown, {
        email: ACCOUNT_MESSAGES.emailUnknown,
      });
    if (user.email.trim().toLowerCase() !== email)
      throw AppError.validation(AccountErrorCode.EmailMismatch, ACCOUNT_MESSAGES.emailMismatch, {
        email: ACCOUNT_MESSAGES.emailMismatch,
      });
    const started = await this.rpc.call('integrations.account.delete', { userId: user.userId, actor: email });
    // This replica refuses the old tokens now; the others as soon as the bucket's watch brings the mark.
    this.deletions.remember(user.userId, {
      deletionId: started.deletionId,
      requestedAtMs: Date.parse(started.requestedAt),
    });
    return started;
  }

  deletion(user: AuthUser): Promise<DeletionStatus> {
    return this.rpc.call('integrations.account.deletion', { userId: user.userId });
  }

  retention(user: AuthUser): Promise<Retention> {
    return this.rpc.call('integrations.account.retention.get', { userId: user.userId });
  }

  setRetention(user: AuthUser, days: Retention['days']): Promise<Retention> {
    return this.rpc.call('integrations.account.retention.set', { userId: user.userId, days });
  }
}
