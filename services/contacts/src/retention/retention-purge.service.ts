import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { deleteInBatches, RpcClient, SERVICE_ENV, syncRetentionSettings } from '@bns/service-kit';
import type { ContactsEnv } from '../config/env.js';
import { RETENTION_CLOCK, type RetentionClock } from './retention-clock.js';
import { RetentionRepository } from './retention.repository.js';

/**
 * Applies each user's retention setting (stored in integrations, read a page at a time before each
 * run) to the inbox: messages older than the period go, and a conversation whose last message is that
 * old keeps its row (number, unread count) without the text; a batch per statement. Contacts and their
 * facts are not message details and stay.
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
    @Inject(SERVICE_ENV) private readonly env: Pick<ContactsEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.RETENTION_PURGE_EVERY_MS === 0) return;
    this.timer = setInterval(() => void this.runQuietly(), this.env.RETENTION_PURGE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async run(): Promise<{ messages: number; conversations: number }> {
    await syncRetentionSettings(this.rpc, (settings) => this.repo.saveSettings(settings));
    const now = this.clock.now();
    const messages = await deleteInBatches(() => this.repo.purgeMessagesBatch(now));
    const conversations = await deleteInBatches(() => this.repo.blankConversationsBatch(now));
    return { messages, conversations };
  }

  private async runQuietly(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const done = await this.run();
      if (done.messages + done.conversations > 0) this.logger.log(done, 'inbox messages past their retention removed');
    } catch (err) {
      // Without the settings nothing is purged: a user's "keep" must never be read as the default.
      this.logger.warn({ err: (err as Error).name }, 'retention purge failed; it runs again at the next interval');
    } finally {
      this.running = false;
    }
  }
}
