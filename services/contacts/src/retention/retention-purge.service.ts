import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  deleteInBatches,
  RETENTION_CLOCK,
  RetentionPurgeLoop,
  RpcClient,
  SERVICE_ENV,
  type RetentionClock,
} from '@bns/service-kit';
import type { ContactsEnv } from '../config/env.js';
import { RetentionRepository } from './retention.repository.js';

/**
 * Applies each user's retention setting (stored in integrations, read a page at a time before each
 * run) to the inbox: messages older than the period go, and a conversation whose last message is that
 * old keeps its row (number, unread count) without the text; a batch per statement. Contacts and their
 * facts are not message details and stay.
 */
@Injectable()
export class RetentionPurge extends RetentionPurgeLoop<{ messages: number; conversations: number }> {
  constructor(
    private readonly repo: RetentionRepository,
    rpc: RpcClient,
    @Inject(RETENTION_CLOCK) clock: RetentionClock,
    @Inject(SERVICE_ENV) env: Pick<ContactsEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {
    super({
      everyMs: env.RETENTION_PURGE_EVERY_MS,
      rpc,
      clock,
      save: (settings) => repo.saveSettings(settings),
      logger: new Logger('RetentionPurge'),
      removed: 'inbox messages past their retention removed',
    });
  }

  protected async purge(now: Date): Promise<{ messages: number; conversations: number }> {
    const messages = await deleteInBatches(() => this.repo.purgeMessagesBatch(now));
    const conversations = await deleteInBatches(() => this.repo.blankConversationsBatch(now));
    return { messages, conversations };
  }
}
