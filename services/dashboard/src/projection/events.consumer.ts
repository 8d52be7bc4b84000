import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { EVENTS_STREAM, type EventKey } from '@bns/contracts';
import { NATS_CONNECTION, SERVICE_ENV } from '@bns/service-kit';
import type { DashboardEnv } from '../config/env.js';
import { observeBatch } from '../metrics/dashboard.metrics.js';
import { parseReadModelEvent, type ReadModelEvent } from './event-shape.js';
import { ProjectionService } from './projection.service.js';

/** The events the read model is built from. */
export const READ_MODEL_SUBJECTS = ['events.message.status', 'events.session.state', 'events.message.received'] as const satisfies readonly EventKey[];

const MS_NS = 1_000_000;

/** Messages of one consumer waiting to be applied, and the batch being applied now. */
interface Lane {
  buffer: JsMsg[];
  pumping: Promise<void> | undefined;
}
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Feeds the read model from the EVENTS stream through durable pull consumers, one per subject: a
 * single consumer with several filter_subjects needs nats-server 2.10, and Debian ships 2.9. Durable
 * means the server remembers what was acked, so events published while every replica was down are
 * applied when one comes back; replicas share the consumers and split the work. An event is acked only
 * after the transaction that applied it has committed.
 */
@Injectable()
export class EventsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EventsConsumer');
  private readonly lanes: Lane[] = [];
  private readonly subscriptions = new Set<ConsumerMessages>();
  private stopping = false;
  private pruneTimer?: NodeJS.Timeout;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: DashboardEnv,
    private readonly projection: ProjectionService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const subject of READ_MODEL_SUBJECTS) {
      const durable = `${this.env.DASHBOARD_CONSUMER}-${subject.replaceAll('.', '-')}`;
      await this.ensureConsumer(durable, subject);
      void this.run(durable);
    }
    this.pruneTimer = setInterval(() => void this.prune(), 3600_000);
    this.pruneTimer.unref();
  }

  /**
   * Stops pulling, finishes the batch in hand and hands back the rest with a nak, so another replica
   * (or our next start) gets it at once. What the server had already sent when the pull subscription
   * closed is redelivered after the ack wait: nothing is lost, only delayed.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.pruneTimer);
    await Promise.all([...this.subscriptions].map((m) => m.close().catch(() => undefined)));
    await Promise.all(this.lanes.map((l) => l.pumping));
    for (const lane of this.lanes) for (const m of lane.buffer.splice(0)) m.nak();
  }

  /** Creates the durable consumer, or brings an existing one's tunable settings up to date. */
  private async ensureConsumer(durable: string, subject: string): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const tunables = {
      ack_wait: this.env.DASHBOARD_ACK_WAIT_MS * MS_NS,
      max_deliver: this.env.DASHBOARD_MAX_DELIVER,
      max_ack_pending: this.env.DASHBOARD_BATCH_MAX * 4,
    };
    try {
      await jsm.consumers.info(EVENTS_STREAM, durable);
      await jsm.consumers.update(EVENTS_STREAM, durable, tunables);
    } catch {
      await jsm.consumers.add(EVENTS_STREAM, {
        durable_name: durable,
        filter_subject: subject,
        ack_policy: AckPolicy.Explicit,
        // A new consumer starts from the oldest event the stream still holds: the read model is rebuilt.
        deliver_policy: DeliverPolicy.All,
        ...tunables,
      });
    }
  }

  /** Consumes until shutdown, starting over if the consumer fails (its events are redelivered). */
  private async run(durable: string): Promise<void> {
    const lane: Lane = { buffer: [], pumping: undefined };
    this.lanes.push(lane);
    while (!this.stopping) {
      try {
        const consumer = await jetstream(this.nc).consumers.get(EVENTS_STREAM, durable);
        const messages = await consumer.consume({ max_messages: this.env.DASHBOARD_BATCH_MAX * 2, callback: (m) => this.enqueue(lane, m) });
        this.subscriptions.add(messages);
        const err = await messages.closed();
        this.subscriptions.delete(messages);
        if (err && !this.stopping) throw err;
      } catch (err) {
        if (!this.stopping) {
          this.logger.error({ err, durable }, 'event consumer stopped; restarting');
          await sleep(1000);
        }
      }
    }
  }

  /**
   * Messages queue up in the lane while a batch is being applied; the next batch takes whatever has
   * arrived by then (up to DASHBOARD_BATCH_MAX). The server's max_ack_pending bounds the queue.
   */
  private enqueue(lane: Lane, m: JsMsg): void {
    if (this.stopping) return m.nak(1000);
    lane.buffer.push(m);
    this.kick(lane);
  }

  private kick(lane: Lane): void {
    if (lane.pumping || lane.buffer.length === 0 || this.stopping) return;
    // Start on the next turn, so the rest of the messages that came in the same read join the batch.
    lane.pumping = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pump(lane))
      .finally(() => {
        lane.pumping = undefined;
        // Anything queued between the last batch and now must not wait for the next message.
        this.kick(lane);
      });
  }

  private async pump(lane: Lane): Promise<void> {
    while (lane.buffer.length > 0 && !this.stopping) {
      const batch = lane.buffer.splice(0, this.env.DASHBOARD_BATCH_MAX);
      try {
        await this.apply(batch);
      } catch (err) {
        this.logger.error({ err }, 'applying a batch failed unexpectedly; its events will be redelivered');
        for (const m of batch) m.nak(1000);
      }
    }
  }

  private async apply(batch: JsMsg[]): Promise<void> {
    const parsed: Array<{ m: JsMsg; e: ReadModelEvent }> = [];
    for (const m of batch) {
      let body: unknown;
      try {
        body = m.json();
      } catch {
        body = undefined;
      }
      const e = parseReadModelEvent(m.subject, body);
      if (typeof e === 'string') {
        this.logger.warn({ subject: m.subject, seq: m.seq, problem: e }, 'malformed event dropped');
        m.term(e);
      } else {
        parsed.push({ m, e });
      }
    }
    if (parsed.length === 0) return;
    try {
      await observeBatch(parsed.map((p) => p.m.subject), () => this.projection.applyBatch(parsed.map((p) => p.e)));
      for (const p of parsed) p.m.ack();
      return;
    } catch (err) {
      if (parsed.length === 1) return this.giveBack(parsed[0]!.m, parsed[0]!.e, err);
      this.logger.warn({ err, size: parsed.length }, 'batch failed; applying its events one by one');
    }
    // One bad event must not hold back the rest of its batch.
    for (const p of parsed) {
      try {
        await observeBatch([p.m.subject], () => this.projection.applyBatch([p.e]));
        p.m.ack();
      } catch (err) {
        this.giveBack(p.m, p.e, err);
      }
    }
  }

  private giveBack(m: JsMsg, e: ReadModelEvent, err: unknown): void {
    if (m.info.deliveryCount >= this.env.DASHBOARD_MAX_DELIVER) {
      this.logger.error({ err, eventId: e.event.eventId, subject: m.subject }, 'event could not be applied; dropped after the last delivery');
      m.term('could not be applied');
      return;
    }
    this.logger.warn({ err, eventId: e.event.eventId, delivery: m.info.deliveryCount }, 'event not applied; will retry');
    m.nak(Math.min(30_000, 500 * 2 ** m.info.deliveryCount));
  }

  private async prune(): Promise<void> {
    try {
      const removed = await this.projection.pruneAppliedEvents(this.env.DASHBOARD_APPLIED_EVENTS_RETENTION_DAYS);
      if (removed > 0) this.logger.log({ removed }, 'pruned applied event ids');
    } catch (err) {
      this.logger.warn({ err }, 'pruning applied event ids failed');
    }
  }
}
