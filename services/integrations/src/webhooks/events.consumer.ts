import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, EVENTS_WILDCARD } from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, Poison, SERVICE_ENV, SKIP, UserDeletions } from '@bns/service-kit';
import type { IntegrationsEnv } from '../config/env.js';
import { Dispatcher } from './dispatcher.js';
import { sourceEventOf, type SourceEvent } from './event-mapping.js';
import { FanOutService } from './fan-out.service.js';

/**
 * Feeds webhook deliveries from every event (`events.>`) through one durable JetStream consumer
 * shared by the replicas. An event is acked only after its deliveries were committed, so a crash, a
 * redeploy or a NATS or Postgres blip delays an event, never loses it.
 */
@Injectable()
export class WebhookEventsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookEventsConsumer');
  private readonly consumer: DurableConsumer<SourceEvent>;

  constructor(
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(SERVICE_ENV) env: IntegrationsEnv,
    fanOut: FanOutService,
    dispatcher: Dispatcher,
    @Inject(UserDeletions) deletions: UserDeletions,
  ) {
    this.consumer = new DurableConsumer<SourceEvent>(nc, {
      stream: EVENTS_STREAM,
      durable: env.INTEGRATIONS_CONSUMER,
      filterSubject: EVENTS_WILDCARD,
      ackWaitMs: env.INTEGRATIONS_ACK_WAIT_MS,
      maxDeliver: 50,
      maxAckPending: 1000,
      noun: 'event',
      logger: this.logger,
      decode: (body, m) => {
        const e = sourceEventOf(m.subject, body);
        if (e === undefined) return SKIP;
        if (typeof e === 'string') return new Poison(e);
        // A late event of a deleted account (the cancel's progress, say) must not bring rows back.
        return deletions.isGone(e.userId, e.at) ? SKIP : e;
      },
      handle: async (e) => {
        if ((await fanOut.apply(e)) > 0) dispatcher.kick();
      },
      describe: (e) => ({ eventId: e.eventId }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
