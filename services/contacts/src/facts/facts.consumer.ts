import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  EVENTS_STREAM,
  OPTED_OUT_SUBJECT,
  OptedOutNoticeSchema,
  normalizeHkPhone,
  type EventKey,
} from '@bns/contracts';
import { DurableConsumer, NATS_CONNECTION, noticeOf, SERVICE_ENV, SKIP, UserDeletions } from '@bns/service-kit';
import type { ContactsEnv } from '../config/env.js';
import { ContactsMetrics } from '../metrics/contacts.metrics.js';
import { factOf, type Fact } from './fact-of.js';
import { FactsRepository } from './facts.repository.js';

/** The events the book learns from. */
export const FACT_SUBJECTS = [
  'events.message.status',
  'events.message.received',
] as const satisfies readonly EventKey[];

/**
 * Feeds the facts, the campaign outcomes and the inbox from the message events the sessions and jobs
 * services already publish, through durable JetStream consumers shared by the replicas (one per
 * subject: nats-server 2.9 has no multi-filter consumers). An event is acked once its transaction
 * committed, so a crash or a NATS or Postgres blip delays a fact, never loses it. Opt-outs arrive on the
 * jobs service's core-NATS notice (the opt-out list itself stays the jobs service's).
 */
@Injectable()
export class FactsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('FactsConsumer');
  private readonly consumers: Array<DurableConsumer<Fact>>;
  private optOuts?: Subscription;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) env: ContactsEnv,
    private readonly facts: FactsRepository,
    private readonly metrics: ContactsMetrics,
    @Inject(UserDeletions) private readonly deletions: UserDeletions,
  ) {
    this.consumers = FACT_SUBJECTS.map(
      (subject) =>
        new DurableConsumer<Fact>(nc, {
          stream: EVENTS_STREAM,
          durable: `${env.CONTACTS_CONSUMER}-${subject.replaceAll('.', '-')}`,
          filterSubject: subject,
          ackWaitMs: 10_000,
          maxDeliver: 20,
          maxAckPending: 1000,
          noun: 'event',
          logger: this.logger,
          decode: (body, m) => {
            const fact = factOf(m.subject, body);
            // A late event of a deleted account must not bring its contacts back.
            return fact && !this.deletions.isGone(fact.userId, fact.at) ? fact : SKIP;
          },
          handle: async (fact) => {
            await this.facts.fold(fact);
            this.metrics.folded(fact.kind);
          },
          describe: (fact) => ({ kind: fact.kind }),
        }),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    this.optOuts = this.nc.subscribe(OPTED_OUT_SUBJECT, {
      callback: (err, msg) => {
        if (err) return;
        const notice = noticeOf(msg, OptedOutNoticeSchema);
        if (!notice || this.deletions.isGone(notice.userId, new Date())) return;
        const phones = notice.phones.flatMap((p) => normalizeHkPhone(p) ?? []);
        this.facts.optedOut(notice.userId, phones, new Date()).then(
          () => this.metrics.folded('opted_out', phones.length),
          (e: unknown) => this.logger.warn({ err: e instanceof Error ? e.name : 'error' }, 'opt-out fact not stored'),
        );
      },
    });
    await Promise.all(this.consumers.map((c) => c.start()));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.optOuts?.unsubscribe();
    await Promise.all(this.consumers.map((c) => c.stop()));
  }
}
