import {
  Global,
  Inject,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type Provider,
  type Type,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy } from '@nats-io/jetstream';
import {
  EVENTS_STREAM,
  USER_DELETION_REQUESTED,
  UserDeletionRequestedEventSchema,
  type AccountDataOwner as OwnerName,
  type UserDeletionRequestedEvent,
} from '@bns/contracts';
import type { EntityManager } from 'typeorm';
import { ACCOUNT_LIMITS } from '@bns/contracts';
import { rows } from '../database/transaction.js';
import { SERVICE_INFO, NATS_CONNECTION, type ServiceInfo } from '../kit.module.js';
import { DurableConsumer, Poison, SKIP } from '../nats/durable-consumer.js';
import { EventBus } from '../nats/event-bus.js';
import { UserDeletions } from './user-deletions.js';

/**
 * What a service that holds a user's data implements, once: deleting all of it. It must be idempotent
 * (a redelivery after a crash deletes what was left and answers) and delete in batches
 * (`deleteInBatches`), so no statement holds locks for long however much the user had.
 */
export interface AccountData {
  /** Deletes every row the service holds for the user; the number of rows deleted. */
  deleteUser(userId: string): Promise<number>;
}

export interface AccountDataOptions {
  /** Whether this replica acts for the user (sessions: the user's shard); every replica by default. */
  owns?: (userId: string, info: ServiceInfo) => boolean;
  /** Wait for the server to redeliver a deletion this replica stopped working on (its process died). */
  ackWaitMs?: number;
}

/** How often a long deletion tells JetStream it is still working on it. */
const WORKING_EVERY_MS = 10_000;

/**
 * One durable consumer of `events.user.deletion.requested` per service (per sessions shard): it calls
 * the service's `AccountData.deleteUser` and answers with `events.user.deletion.receipt`. The event is
 * acked only after the receipt was stored, so a kill -9 or a NATS/Postgres blip mid-way redelivers it
 * and the deletion resumes where the rows left off.
 */
export class AccountDeletionConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly consumer: DurableConsumer<UserDeletionRequestedEvent>;

  constructor(
    nc: NatsConnection,
    events: EventBus,
    info: ServiceInfo,
    service: OwnerName,
    owner: AccountData,
    options: AccountDataOptions = {},
  ) {
    this.logger = new Logger(`AccountDeletion ${service}`);
    const durable = `${service}${info.shard === undefined ? '' : `-${info.shard}`}-account-deletions`;
    this.consumer = new DurableConsumer<UserDeletionRequestedEvent>(nc, {
      stream: EVENTS_STREAM,
      durable,
      filterSubject: USER_DELETION_REQUESTED,
      // A consumer made now (a new service, a new shard) starts at new deletions: an old one replayed
      // could hit the new, empty account the same user id has since.
      deliverPolicy: DeliverPolicy.New,
      ackWaitMs: options.ackWaitMs ?? 60_000,
      maxDeliver: 1000,
      maxAckPending: 16,
      noun: 'account deletion',
      logger: this.logger,
      decode: (body) => {
        const checked = UserDeletionRequestedEventSchema.safeParse(body);
        if (!checked.success) return new Poison('not a deletion request');
        if (options.owns && !options.owns(checked.data.userId, info)) return SKIP;
        return checked.data;
      },
      handle: async (e, msg) => {
        const started = Date.now();
        const working = setInterval(() => msg.working(), WORKING_EVERY_MS);
        let rows: number;
        try {
          rows = await owner.deleteUser(e.userId);
        } finally {
          clearInterval(working);
        }
        await events.emit('events.user.deletion.receipt', {
          eventId: `deletion-receipt:${e.deletionId}:${service}`,
          userId: e.userId,
          at: new Date().toISOString(),
          deletionId: e.deletionId,
          service,
          rows,
        });
        this.logger.log({ deletionId: e.deletionId, rows, ms: Date.now() - started }, 'account data deleted');
      },
      describe: (e) => ({ deletionId: e.deletionId }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}

/** Closes the deletions bucket's watch with the app. */
class UserDeletionsShutdown implements OnApplicationShutdown {
  constructor(@Inject(UserDeletions) private readonly deletions: UserDeletions) {}
  onApplicationShutdown(): void {
    this.deletions.stop();
  }
}

/** `UserDeletions` for the whole service (one watch of the bucket per process): import it in the root module. */
@Global()
@Module({
  providers: [
    { provide: UserDeletions, useFactory: (nc: NatsConnection) => UserDeletions.open(nc), inject: [NATS_CONNECTION] },
    UserDeletionsShutdown,
  ],
  exports: [UserDeletions],
})
export class UserDeletionsModule {}

/**
 * The providers that make a service an owner of account data: its `AccountData` class and the
 * deletion consumer that calls it. A new service joins account deletion by adding these to one
 * module's providers and its name to `ACCOUNT_DATA_OWNERS`.
 */
export function accountDataProviders(
  service: OwnerName,
  owner: Type<AccountData>,
  options: AccountDataOptions = {},
): Provider[] {
  return [
    owner,
    {
      provide: AccountDeletionConsumer,
      useFactory: (nc: NatsConnection, events: EventBus, info: ServiceInfo, data: AccountData) =>
        new AccountDeletionConsumer(nc, events, info, service, data, options),
      inject: [NATS_CONNECTION, EventBus, SERVICE_INFO, owner],
    },
  ];
}

/**
 * Runs `step` (one short statement deleting at most a batch of rows, answering how many it deleted)
 * until it deletes nothing; the total. Each step is its own transaction: locks last one batch.
 */
export async function deleteInBatches(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step();
    total += n;
    if (n === 0) return total;
  }
}

/**
 * One batch of a deletion or a purge: deletes up to `limit` rows of `table` matching `where` (its SQL
 * condition over the parameters; `$1` is usually the user id) and answers how many. Locks one batch.
 */
export function batchDeleteSql(table: string, where: string, limitParam: string): string {
  return `WITH gone AS (
    DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ${limitParam}))
    RETURNING 1
  ) SELECT count(*)::int AS n FROM gone`;
}

/**
 * Deletes, in batches, every row of the service's schema (the connection's current schema) in a table
 * with a `user_id` column: a table added later is covered without a change here. Tables that hold a
 * user's rows under another key (a job's recipients by job id) are the service's own to delete first.
 * A table another one still references (a foreign key) is retried after the others.
 */
export async function deleteUserRows(em: EntityManager, userId: string, skip: readonly string[] = []): Promise<number> {
  const tables = (
    await rows<{ table: string }>(
      em,
      `SELECT c.table_name AS table FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND c.column_name = 'user_id' AND t.table_type = 'BASE TABLE'
        ORDER BY c.table_name`,
    )
  )
    .map((r) => r.table)
    .filter((t) => !skip.includes(t));
  let total = 0;
  let pending = tables;
  while (pending.length > 0) {
    const blocked: string[] = [];
    for (const table of pending) {
      try {
        total += await deleteInBatches(
          async () =>
            (
              await rows<{ n: number }>(em, batchDeleteSql(`"${table}"`, 'user_id = $1', '$2'), [
                userId,
                ACCOUNT_LIMITS.deleteBatchRows,
              ])
            )[0]!.n,
        );
      } catch (err) {
        if ((err as { code?: string }).code !== '23503') throw err;
        blocked.push(table);
      }
    }
    if (blocked.length === pending.length) throw new Error(`rows of ${blocked.join(', ')} are still referenced`);
    pending = blocked;
  }
  return total;
}
