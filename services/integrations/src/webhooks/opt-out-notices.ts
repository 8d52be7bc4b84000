import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { OPTED_OUT_SUBJECT, OptedOutNoticeSchema } from '@bns/contracts';
import { NATS_CONNECTION } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import { Dispatcher } from './dispatcher.js';
import { FanOutService } from './fan-out.service.js';

/**
 * `contact.opted_out`: the jobs service announces numbers it put on an account's opt-out list (a STOP
 * reply, or added by hand) on core NATS once that committed. The replicas of this service share the
 * subscription (a queue group) and queue one webhook per number. Best effort: a notice published while
 * no replica listens is not heard (the opt-out itself stands, and GET /v1/opt-outs lists it).
 */
@Injectable()
export class OptOutNotices implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OptOutNotices');
  private subscription?: Subscription;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly fanOut: FanOutService,
    private readonly dispatcher: Dispatcher,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.nc.subscribe(OPTED_OUT_SUBJECT, {
      queue: 'integrations',
      callback: (err, msg) => {
        if (err) return;
        let body: unknown;
        try {
          body = msg.json();
        } catch {
          return;
        }
        const notice = OptedOutNoticeSchema.safeParse(body);
        if (notice.success) void this.queue(notice.data.userId, notice.data.phones);
      },
    });
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  private async queue(userId: string, phones: string[]): Promise<void> {
    const at = this.clock.now().toISOString();
    let queued = 0;
    for (const phone of phones) {
      try {
        queued += await this.fanOut.apply({
          eventId: `opted-out:${randomUUID()}`,
          userId,
          at,
          webhook: { type: 'contact.opted_out', data: { phoneNumber: phone, at } },
        });
      } catch (err) {
        this.logger.warn({ err: (err as Error).name }, 'an opt-out webhook could not be queued');
      }
    }
    if (queued > 0) this.dispatcher.kick();
  }
}
