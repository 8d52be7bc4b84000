import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { AUDIT_RECORDED, AuditRecordedEventSchema, EVENTS_STREAM, type AuditRecordedEvent } from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, Poison } from '@bns/service-kit';
import { AuditService } from './audit.service.js';

/** Appends every `events.audit.recorded` to the log, through one durable consumer shared by the replicas. */
@Injectable()
export class AuditConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('AuditConsumer');
  private readonly consumer: DurableConsumer<AuditRecordedEvent>;

  constructor(@Inject(NATS_CONNECTION) nc: NatsConnection, audit: AuditService) {
    this.consumer = new DurableConsumer<AuditRecordedEvent>(nc, {
      stream: EVENTS_STREAM,
      durable: 'integrations-audit',
      filterSubject: AUDIT_RECORDED,
      ackWaitMs: 30_000,
      maxDeliver: 1000,
      maxAckPending: 1000,
      noun: 'audit entry',
      logger: this.logger,
      decode: (body) => {
        const checked = AuditRecordedEventSchema.safeParse(body);
        return checked.success ? checked.data : new Poison('not an audit entry');
      },
      handle: (e) => audit.record(e),
      describe: (e) => ({ eventId: e.eventId, kind: e.kind }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
