import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, optOutSchemas, type EventKey, type MessageReceivedEvent } from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, Poison, SERVICE_ENV, SKIP, UserDeletions } from '@bns/service-kit';
import type { OptOutsEnv } from './opt-outs.env.js';
import { OptOutsService } from './opt-outs.service.js';

export const INBOUND_SUBJECT = 'events.message.received' satisfies EventKey;

/**
 * Reads inbound messages from the EVENTS stream through a durable pull consumer (one filter subject:
 * nats-server 2.9) and hands each to the opt-outs service. A message is acked only after its opt-out
 * has committed, so a crash or restart redelivers it; applying one twice changes nothing. Replicas
 * share the consumer. Inbound text and numbers are personal data: never logged here.
 */
@Injectable()
export class InboundConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OptOutsInbound');
  private readonly consumer: DurableConsumer<MessageReceivedEvent>;

  constructor(
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(SERVICE_ENV) env: OptOutsEnv,
    private readonly optOuts: OptOutsService,
    @Optional() @Inject(UserDeletions) deletions?: UserDeletions,
  ) {
    this.consumer = new DurableConsumer<MessageReceivedEvent>(nc, {
      stream: EVENTS_STREAM,
      durable: env.OPT_OUTS_CONSUMER,
      filterSubject: INBOUND_SUBJECT,
      // A new consumer starts from the oldest message the stream holds: STOPs sent before it existed count.
      ackWaitMs: env.OPT_OUTS_ACK_WAIT_MS,
      maxDeliver: env.OPT_OUTS_MAX_DELIVER,
      maxAckPending: 1000,
      // One at a time, in order.
      batchMax: 1,
      prefetch: 100,
      noun: 'inbound event',
      logger: this.logger,
      decode: (body) => {
        const parsed = optOutSchemas().messageReceived.safeParse(body);
        if (!parsed.success) return new Poison('malformed');
        // A STOP that arrives late for a deleted account must not bring its opt-out list back.
        return deletions?.isGone(parsed.data.userId, parsed.data.at) ? SKIP : parsed.data;
      },
      handle: (event) => this.handle(event),
      describe: (event) => ({ eventId: event.eventId }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }

  private async handle(event: MessageReceivedEvent): Promise<void> {
    const outcome = await this.optOuts.handleInbound(event);
    // Logged before the ack (it used to follow it); the outcome is committed either way.
    if (outcome === 'opted_out') this.logger.log({ userId: event.userId, eventId: event.eventId }, 'opt-out recorded');
  }
}
