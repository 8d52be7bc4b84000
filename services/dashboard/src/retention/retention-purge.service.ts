import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  deleteInBatches,
  RETENTION_CLOCK,
  RetentionPurgeLoop,
  RpcClient,
  SERVICE_ENV,
  type RetentionClock,
} from '@bns/service-kit';
import type { DashboardEnv } from '../config/env.js';
import { RetentionRepository } from './retention.repository.js';

/**
 * Applies each user's retention setting to the read model: the text of messages older than the period
 * and of their replies goes (received messages are deleted; a sent message's row stays without its text,
 * so its receipts and counts stay right), a batch per statement. Totals and monthly usage are counts
 * and stay.
 */
@Injectable()
export class RetentionPurge extends RetentionPurgeLoop<{ messages: number; replies: number }> {
  constructor(
    private readonly repo: RetentionRepository,
    rpc: RpcClient,
    @Inject(RETENTION_CLOCK) clock: RetentionClock,
    @Inject(SERVICE_ENV) env: Pick<DashboardEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {
    super({
      everyMs: env.RETENTION_PURGE_EVERY_MS,
      rpc,
      clock,
      save: (settings) => repo.saveSettings(settings),
      logger: new Logger('RetentionPurge'),
      removed: 'message text past its retention removed',
    });
  }

  protected async purge(now: Date): Promise<{ messages: number; replies: number }> {
    const messages = await deleteInBatches(() => this.repo.blankMessagesBatch(now));
    const replies = await deleteInBatches(() => this.repo.purgeInboundBatch(now));
    return { messages, replies };
  }
}
