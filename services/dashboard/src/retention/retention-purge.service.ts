import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { deleteInBatches, RpcClient, SERVICE_ENV, syncRetentionSettings } from '@bns/service-kit';
import type { DashboardEnv } from '../config/env.js';
import { RETENTION_CLOCK, type RetentionClock } from './retention-clock.js';
import { RetentionRepository } from './retention.repository.js';

/**
 * Applies each user's retention setting to the read model: the text of messages older than the period
 * and of their replies goes (received messages are deleted; a sent message's row stays without its text,
 * so its receipts and counts stay right), a batch per statement. Totals and monthly usage are counts
 * and stay.
 */
@Injectable()
export class RetentionPurge implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RetentionPurge');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly repo: RetentionRepository,
    private readonly rpc: RpcClient,
    @Inject(RETENTION_CLOCK) private readonly clock: RetentionClock,
    @Inject(SERVICE_ENV) private readonly env: Pick<DashboardEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.RETENTION_PURGE_EVERY_MS === 0) return;
    this.timer = setInterval(() => void this.runQuietly(), this.env.RETENTION_PURGE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async run(): Promise<{ messages: number; replies: number }> {
    await syncRetentionSettings(this.rpc, (settings) => this.repo.saveSettings(settings));
    const now = this.clock.now();
    const messages = await deleteInBatches(() => this.repo.blankMessagesBatch(now));
    const replies = await deleteInBatches(() => this.repo.purgeInboundBatch(now));
    return { messages, replies };
  }

  private async runQuietly(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const done = await this.run();
      if (done.messages + done.replies > 0) this.logger.log(done, 'message text past its retention removed');
    } catch (err) {
      this.logger.warn({ err: (err as Error).name }, 'retention purge failed; it runs again at the next interval');
    } finally {
      this.running = false;
    }
  }
}
