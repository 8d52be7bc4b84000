import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { deleteInBatches, SERVICE_ENV } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import type { IntegrationsEnv } from '../config/env.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * The webhook delivery log follows each user's retention setting (kept in this service): finished
 * deliveries older than it go, a batch per statement, every RETENTION_PURGE_EVERY_MS on the injected
 * clock. Deliveries still due are never touched.
 */
@Injectable()
export class WebhookDeliveriesPurge implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDeliveriesPurge');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repo: WebhooksRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_ENV) private readonly env: Pick<IntegrationsEnv, 'RETENTION_PURGE_EVERY_MS'>,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.runQuietly(), this.env.RETENTION_PURGE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Deliveries removed. */
  run(): Promise<number> {
    const now = this.clock.now();
    return deleteInBatches(() => this.repo.purgeDeliveriesBatch(now));
  }

  private async runQuietly(): Promise<void> {
    try {
      const n = await this.run();
      if (n > 0) this.logger.log({ rows: n }, 'webhook deliveries past their retention removed');
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).name },
        'webhook delivery purge failed; it runs again at the next interval',
      );
    }
  }
}
