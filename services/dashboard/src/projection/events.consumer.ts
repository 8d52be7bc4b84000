import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, type EventKey } from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, Poison, SERVICE_ENV, SKIP, UserDeletions } from '@bns/service-kit';
import { DASHBOARD_REDELIVERY, type DashboardEnv } from '../config/env.js';
import { observeBatch } from '../metrics/dashboard.metrics.js';
import { parseReadModelEvent, type ReadModelEvent } from './event-shape.js';
import { ProjectionService } from './projection.service.js';

/** How long the first event of a batch waits for others (ms): one transaction per batch, not per event. */
const GATHER_MS = 20;

/** The events the read model is built from. */
export const READ_MODEL_SUBJECTS = [
  'events.message.status',
  'events.session.state',
  'events.message.received',
  // Only for the count of skipped recipients: an event without skips is acked and dropped unread.
  'events.job.progress',
] as const satisfies readonly EventKey[];

/**
 * Feeds the read model from the EVENTS stream through durable pull consumers, one per subject: a
 * single consumer with several filter_subjects needs nats-server 2.10, and Debian ships 2.9. Durable
 * means the server remembers what was acked, so events published while every replica was down are
 * applied when one comes back; replicas share the consumers and split the work. An event is acked only
 * after the transaction that applied it has committed; a batch that fails is applied event by event.
 * On shutdown the batch in hand is finished and the rest handed back with a nak; what the server had
 * already sent when the pull subscription closed is redelivered after the ack wait.
 */
@Injectable()
export class EventsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EventsConsumer');
  private readonly consumers: Array<DurableConsumer<ReadModelEvent>>;
  private pruneTimer?: NodeJS.Timeout;

  constructor(
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: DashboardEnv,
    private readonly projection: ProjectionService,
    @Optional() @Inject(UserDeletions) deletions?: UserDeletions,
  ) {
    this.consumers = READ_MODEL_SUBJECTS.map(
      (subject) =>
        new DurableConsumer<ReadModelEvent>(nc, {
          stream: EVENTS_STREAM,
          durable: `${env.DASHBOARD_CONSUMER}-${subject.replaceAll('.', '-')}`,
          filterSubject: subject,
          // A new consumer starts from the oldest event the stream still holds (the default): the read model is rebuilt.
          ackWaitMs: env.DASHBOARD_ACK_WAIT_MS,
          maxDeliver: env.DASHBOARD_MAX_DELIVER,
          redelivery: DASHBOARD_REDELIVERY,
          maxAckPending: env.DASHBOARD_BATCH_MAX * 4,
          batchMax: env.DASHBOARD_BATCH_MAX,
          prefetch: env.DASHBOARD_BATCH_MAX * 2,
          // A burst of events shares one transaction; a lone one waits at most this long for company.
          gatherMs: GATHER_MS,
          noun: 'event',
          logger: this.logger,
          // Problems name the field, never its value (see parseReadModelEvent).
          decode: (body, m) => {
            const e = parseReadModelEvent(m.subject, body);
            if (typeof e === 'string') return new Poison(e);
            if (e.subject === 'events.job.progress' && !e.event.progress.skipped) return SKIP;
            // A late event of a deleted account must not bring its rows back.
            return deletions?.isGone(e.event.userId, e.event.at) ? SKIP : e;
          },
          handle: (e, m) => observeBatch([m.subject], () => this.projection.applyBatch([e])),
          handleBatch: (deliveries) =>
            observeBatch(
              deliveries.map((d) => d.msg.subject),
              () => this.projection.applyBatch(deliveries.map((d) => d.payload)),
            ),
          describe: (e) => ({ eventId: e.event.eventId }),
        }),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const consumer of this.consumers) await consumer.start();
    this.pruneTimer = setInterval(() => void this.prune(), 3600_000);
    this.pruneTimer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.pruneTimer);
    await Promise.all(this.consumers.map((c) => c.stop()));
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
