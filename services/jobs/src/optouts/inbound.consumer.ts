import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { EVENTS_STREAM, optOutSchemas, type EventKey } from '@bns/contracts';
import { NATS_CONNECTION, SERVICE_ENV } from '@bns/service-kit';
import type { OptOutsEnv } from './opt-outs.env.js';
import { OptOutsService } from './opt-outs.service.js';

export const INBOUND_SUBJECT = 'events.message.received' satisfies EventKey;
const MS_NS = 1_000_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Reads inbound messages from the EVENTS stream through a durable pull consumer (one filter subject:
 * nats-server 2.9) and hands each to the opt-outs service. A message is acked only after its opt-out
 * has committed, so a crash or restart redelivers it; applying one twice changes nothing. Replicas
 * share the consumer. Inbound text and numbers are personal data: never logged here.
 */
@Injectable()
export class InboundConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OptOutsInbound');
  private messages?: ConsumerMessages;
  private running?: Promise<void>;
  private stopping = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: OptOutsEnv,
    private readonly optOuts: OptOutsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ensureConsumer();
    this.running = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.messages?.close().catch(() => undefined);
    await this.running;
  }

  private async ensureConsumer(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const durable = this.env.OPT_OUTS_CONSUMER;
    const tunables = { ack_wait: this.env.OPT_OUTS_ACK_WAIT_MS * MS_NS, max_deliver: this.env.OPT_OUTS_MAX_DELIVER, max_ack_pending: 1000 };
    try {
      await jsm.consumers.info(EVENTS_STREAM, durable);
      await jsm.consumers.update(EVENTS_STREAM, durable, tunables);
    } catch {
      await jsm.consumers.add(EVENTS_STREAM, {
        durable_name: durable,
        filter_subject: INBOUND_SUBJECT,
        ack_policy: AckPolicy.Explicit,
        // A new consumer starts from the oldest message the stream holds: STOPs sent before it existed count.
        deliver_policy: DeliverPolicy.All,
        ...tunables,
      });
    }
  }

  /** Consumes until shutdown, starting over when the consumer fails (unacked messages come back). */
  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const consumer = await jetstream(this.nc).consumers.get(EVENTS_STREAM, this.env.OPT_OUTS_CONSUMER);
        this.messages = await consumer.consume({ max_messages: 100 });
        for await (const m of this.messages) {
          if (this.stopping) {
            m.nak();
            continue;
          }
          await this.handle(m);
        }
      } catch (err) {
        if (!this.stopping) {
          this.logger.error({ err }, 'inbound consumer stopped; restarting');
          await sleep(1000);
        }
      }
    }
  }

  private async handle(m: JsMsg): Promise<void> {
    let body: unknown;
    try {
      body = m.json();
    } catch {
      body = undefined;
    }
    const parsed = optOutSchemas().messageReceived.safeParse(body);
    if (!parsed.success) {
      this.logger.warn({ seq: m.seq }, 'malformed inbound event dropped');
      m.term('malformed');
      return;
    }
    try {
      const outcome = await this.optOuts.handleInbound(parsed.data);
      m.ack();
      if (outcome === 'opted_out') this.logger.log({ userId: parsed.data.userId, eventId: parsed.data.eventId }, 'opt-out recorded');
    } catch (err) {
      if (m.info.deliveryCount >= this.env.OPT_OUTS_MAX_DELIVER) {
        this.logger.error({ err, eventId: parsed.data.eventId }, 'inbound event could not be applied; dropped after the last delivery');
        m.term('could not be applied');
        return;
      }
      this.logger.warn({ err, eventId: parsed.data.eventId, delivery: m.info.deliveryCount }, 'inbound event not applied; will retry');
      m.nak(Math.min(30_000, 500 * 2 ** m.info.deliveryCount));
    }
  }
}
