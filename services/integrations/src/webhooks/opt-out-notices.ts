import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { INTEGRATIONS_LIMITS, OPT_OUT_LIMITS, OPTED_OUT_SUBJECT, OptedOutNoticeSchema } from '@bns/contracts';
import { NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { Dispatcher } from './dispatcher.js';
import { FanOutService } from './fan-out.service.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * `contact.opted_out`, at least once. The source of truth is the account's opt-out list, which the jobs
 * service keeps in Postgres; this service reads it over NATS (newest first) back to a per-user
 * watermark and queues one webhook per number, each with an event id made of the number and the time
 * it was listed, so reading an entry again queues nothing new. It reads a user's list:
 *   - at once when the jobs service announces numbers it put on it (core NATS, shared by the replicas);
 *   - at start and every INTEGRATIONS_LIMITS.optOutSweepMs for every user with an endpoint that wants
 *     the event, which catches up what was announced while no replica listened (a crash, a redeploy,
 *     a NATS blip): a notice can be missed, an opt-out cannot.
 */
@Injectable()
export class OptOutNotices implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OptOutNotices');
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  /** Users being read now, and whether another read was asked meanwhile. */
  private readonly reading = new Map<string, boolean>();
  private stopped = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly webhooks: WebhooksRepository,
    private readonly fanOut: FanOutService,
    private readonly dispatcher: Dispatcher,
    private readonly rpc: RpcClient,
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
        if (notice.success) this.readSoon(notice.data.userId);
      },
    });
    void this.sweep();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.subscription?.unsubscribe();
  }

  /** Every user who wants the event, one after the other; then again after optOutSweepMs. */
  async sweep(): Promise<void> {
    try {
      for (const userId of await this.webhooks.usersSubscribedTo('contact.opted_out')) {
        if (this.stopped) return;
        await this.read(userId);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).name }, 'the opt-out sweep stopped early; it runs again later');
    } finally {
      if (!this.stopped) {
        this.timer = setTimeout(() => void this.sweep(), INTEGRATIONS_LIMITS.optOutSweepMs);
        this.timer.unref();
      }
    }
  }

  private readSoon(userId: string): void {
    if (this.reading.has(userId)) {
      this.reading.set(userId, true);
      return;
    }
    void this.read(userId).catch((err: unknown) =>
      this.logger.warn({ err: (err as Error).name }, 'an opt-out list could not be read; the sweep tries again'),
    );
  }

  /** Queues contact.opted_out for the user's numbers listed since its watermark; answers how many deliveries. */
  async read(userId: string): Promise<number> {
    if (this.reading.has(userId)) {
      this.reading.set(userId, true);
      return 0;
    }
    this.reading.set(userId, false);
    let queued = 0;
    try {
      do {
        this.reading.set(userId, false);
        queued += await this.readOnce(userId);
      } while (this.reading.get(userId) === true);
    } finally {
      this.reading.delete(userId);
    }
    if (queued > 0) this.dispatcher.kick();
    return queued;
  }

  private async readOnce(userId: string): Promise<number> {
    const watermark = await this.webhooks.optOutWatermark(userId);
    if (!watermark) return 0;
    const from = watermark.getTime() - INTEGRATIONS_LIMITS.optOutSweepSlackMs;
    const entries: { phoneNumber: string; at: string }[] = [];
    let cursor: string | undefined;
    read: do {
      const page = await this.rpc.call('jobs.optouts.list', {
        userId,
        limit: String(OPT_OUT_LIMITS.listPageMax),
        ...(cursor ? { cursor } : {}),
      });
      for (const e of page.optOuts) {
        if (new Date(e.at).getTime() < from) break read;
        entries.push(e);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    let queued = 0;
    let newest = watermark;
    for (const e of entries.reverse()) {
      queued += await this.fanOut.apply({
        eventId: `contact-opted-out:${e.phoneNumber}:${e.at}`,
        userId,
        at: e.at,
        webhook: { type: 'contact.opted_out', data: { phoneNumber: e.phoneNumber, at: e.at } },
      });
      if (new Date(e.at) > newest) newest = new Date(e.at);
    }
    await this.webhooks.raiseOptOutWatermark(userId, newest);
    return queued;
  }
}
