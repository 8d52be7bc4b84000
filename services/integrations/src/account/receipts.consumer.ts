import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EVENTS_STREAM,
  USER_DELETION_RECEIPT,
  UserDeletionReceiptEventSchema,
  type UserDeletionReceiptEvent,
} from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, Poison } from '@bns/service-kit';
import { AccountDeletionsService } from './account-deletions.service.js';

/** Folds each owner's deletion receipt into its deletion, through one durable consumer shared by the replicas. */
@Injectable()
export class DeletionReceiptsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DeletionReceipts');
  private readonly consumer: DurableConsumer<UserDeletionReceiptEvent>;

  constructor(@Inject(NATS_CONNECTION) nc: NatsConnection, deletions: AccountDeletionsService) {
    this.consumer = new DurableConsumer<UserDeletionReceiptEvent>(nc, {
      stream: EVENTS_STREAM,
      durable: 'integrations-account-deletion-receipts',
      filterSubject: USER_DELETION_RECEIPT,
      ackWaitMs: 30_000,
      maxDeliver: 1000,
      maxAckPending: 100,
      noun: 'deletion receipt',
      logger: this.logger,
      decode: (body) => {
        const checked = UserDeletionReceiptEventSchema.safeParse(body);
        return checked.success ? checked.data : new Poison('not a deletion receipt');
      },
      handle: (e) => deletions.receipt(e),
      describe: (e) => ({ deletionId: e.deletionId, service: e.service }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
