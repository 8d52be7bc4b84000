import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { AccountDeletionsService } from './account-deletions.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class AccountHandler {
  constructor(private readonly deletions: AccountDeletionsService) {}

  @Rpc('integrations.account.delete')
  delete(@Payload() req: RequestOf<'integrations.account.delete'>): Promise<ReplyOf<'integrations.account.delete'>> {
    return this.deletions.start(req.userId);
  }

  @Rpc('integrations.account.deletion')
  deletion(
    @Payload() req: RequestOf<'integrations.account.deletion'>,
  ): Promise<ReplyOf<'integrations.account.deletion'>> {
    return this.deletions.status(req.userId);
  }

  @Rpc('integrations.account.retention.get')
  retention(
    @Payload() req: RequestOf<'integrations.account.retention.get'>,
  ): Promise<ReplyOf<'integrations.account.retention.get'>> {
    return this.deletions.retention(req.userId);
  }

  @Rpc('integrations.account.retention.set')
  setRetention(
    @Payload() req: RequestOf<'integrations.account.retention.set'>,
  ): Promise<ReplyOf<'integrations.account.retention.set'>> {
    return this.deletions.setRetention(req.userId, req.days);
  }

  @Rpc('integrations.account.retention.page')
  retentionPage(
    @Payload() req: RequestOf<'integrations.account.retention.page'>,
  ): Promise<ReplyOf<'integrations.account.retention.page'>> {
    return this.deletions.retentionPage(req.after, req.limit);
  }
}
