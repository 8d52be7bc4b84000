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
  isUuid,
  normalizeHkPhone,
  RESULTS_LIMITS,
  SESSION_MESSAGES,
  type EventKey,
} from '@bns/contracts';
import {
  DurableConsumer,
  NATS_CONNECTION,
  OutboxPublisher,
  SERVICE_ENV,
  SKIP,
  Transactions,
  type OutboxRow,
} from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { Refusals, type RefusalFold } from './refusals.js';
import { ResultsRepository, type FoldDelta } from './results.repository.js';
import { UnansweredRepository } from './unanswered.repository.js';

/** The events the report folds in. */
export const RECEIPT_SUBJECTS = [
  'events.message.status',
  'events.message.received',
] as const satisfies readonly EventKey[];

/**
 * How long the first event of a batch waits for others (ms), by subject: one transaction per batch,
 * not per event. Delivered and read receipts are a report, not a prompt (webhooks and the dashboard
 * read the events themselves): a second lets a batch hold several receipts of each running job, so a
 * job's counts are one update per batch rather than nearly one per receipt. A refusal is a prompt
 * (two in a row pause the job before its next send): it ends the gather it comes into (`urgent`).
 * Replies feed the sending policy's counts, so they wait a quarter second at most.
 */
const GATHER_MS: Record<(typeof RECEIPT_SUBJECTS)[number], number> = {
  'events.message.status': 1000,
  'events.message.received': 250,
};

const BATCH_MAX = 1000;
const ACK_WAIT_MS = 10_000;
const MAX_DELIVER = 20;

/** The longest refusal reason kept on a recipient. */
const REFUSAL_ERROR_MAX = 500;

/**
 * A receipt, reply or refusal to fold; anything else on the subjects (sent, failed: jobs wrote those
 * itself) is skipped. A refusal is a `failed` receipt from sessions marked `refused`: WhatsApp accepted
 * the send, then refused it.
 */
export type Fold =
  | { kind: 'delivered' | 'read'; userId: string; jobId: string; phone: string; at: Date }
  | { kind: 'replied'; userId: string; phone: string; at: Date; reply: ReplyText }
  | ({ kind: 'refused' } & RefusalFold);

/** A reply's text as kept: NUL bytes stripped, cut at RESULTS_LIMITS.replyTextMax; `id` is its event's. */
export interface ReplyText {
  id: string;
  text: string;
}

/** The longest event id kept as a reply's id (sessions derives it from WhatsApp's message id). */
const REPLY_ID_MAX = 200;

/** What an event says for the report, or undefined when it says nothing (or is malformed). */
export function foldOf(subject: string, body: unknown): Fold | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = body as Record<string, unknown>;
  if (typeof e.userId !== 'string' || typeof e.at !== 'string') return undefined;
  const at = new Date(e.at);
  if (Number.isNaN(at.getTime())) return undefined;
  if (subject === 'events.message.status') {
    if (!isUuid(e.jobId)) return undefined;
    const refused = e.status === 'failed' && e.refused === true;
    if (e.status !== 'delivered' && e.status !== 'read' && !refused) return undefined;
    const phone = normalizeHkPhone(e.recipient);
    if (!phone) return undefined;
    if (e.status === 'delivered' || e.status === 'read')
      return { kind: e.status, userId: e.userId, jobId: e.jobId, phone, at };
    const error = (typeof e.error === 'string' && e.error !== '' ? e.error : SESSION_MESSAGES.sendRefusedAfterAccept)
      .replaceAll('\u0000', '')
      .slice(0, REFUSAL_ERROR_MAX);
    return { kind: 'refused', userId: e.userId, jobId: e.jobId, phone, at, error };
  }
  if (subject === 'events.message.received') {
    const phone = normalizeHkPhone(e.from);
    if (!phone || typeof e.eventId !== 'string' || e.eventId === '' || e.eventId.length > REPLY_ID_MAX)
      return undefined;
    const text = (typeof e.text === 'string' ? e.text : '')
      .replaceAll('\u0000', '')
      .slice(0, RESULTS_LIMITS.replyTextMax);
    return { kind: 'replied', userId: e.userId, phone, at, reply: { id: e.eventId, text } };
  }
  return undefined;
}

/**
 * Folds delivered/read receipts (`events.message.status`, published by sessions with the job id) and
 * replies (`events.message.received`) into the report, through durable JetStream pull consumers, one
 * per subject (nats-server 2.9 has no multi-filter consumers). Folding sets each time once, so a
 * redelivered event changes nothing; an event is acked only after its transaction committed. Events
 * that say nothing for the report (sent, failed: jobs wrote those itself; malformed ones) are acked
 * and skipped.
 */
@Injectable()
export class ReceiptsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ReceiptsConsumer');
  private readonly consumers: Array<DurableConsumer<Fold>>;

  constructor(
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(SERVICE_ENV) env: JobsEnv,
    private readonly tx: Transactions,
    private readonly results: ResultsRepository,
    private readonly refusals: Refusals,
    private readonly publisher: OutboxPublisher,
    private readonly unanswered: UnansweredRepository,
  ) {
    this.consumers = RECEIPT_SUBJECTS.map(
      (subject) =>
        new DurableConsumer<Fold>(nc, {
          stream: EVENTS_STREAM,
          durable: `${env.JOBS_RESULTS_CONSUMER}-${subject.replaceAll('.', '-')}`,
          filterSubject: subject,
          // Receipts of jobs sent before this consumer existed are folded in too (the default).
          ackWaitMs: ACK_WAIT_MS,
          maxDeliver: MAX_DELIVER,
          maxAckPending: BATCH_MAX * 4,
          batchMax: BATCH_MAX,
          prefetch: BATCH_MAX,
          // A burst of events shares one transaction; a lone one waits at most this long for company.
          gatherMs: GATHER_MS[subject],
          urgent: (f) => f.kind === 'refused',
          noun: 'receipt',
          logger: this.logger,
          // A fold holds a phone number: nothing of it is logged.
          decode: (body, m) => foldOf(m.subject, body) ?? SKIP,
          handle: (f) => this.apply([f]),
          handleBatch: (deliveries) => this.apply(deliveries.map((d) => d.payload)),
        }),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const consumer of this.consumers) await consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop()));
  }

  /**
   * Applies folds in one transaction; returns what they changed. Delivered/read receipts are folded
   * all together (two statements for the batch), replies one by one (each finds the newest message to
   * its number). Exposed for in-process tests.
   */
  async apply(folds: readonly Fold[]): Promise<FoldDelta[]> {
    const published: OutboxRow[] = [];
    const deltas = await this.tx.run(async (em) => {
      published.length = 0;
      // Replies first, in one order: each may take its account's lane lock (the unanswered counts),
      // which a send takes before its recipients too.
      const replies = folds
        .flatMap((f) => (f.kind === 'replied' ? [f] : []))
        .sort((a, b) => (a.userId === b.userId ? (a.phone < b.phone ? -1 : 1) : a.userId < b.userId ? -1 : 1));
      for (const r of replies) await this.unanswered.replied(em, r.userId, r.phone, r.at);
      const receipts = folds.flatMap((f) =>
        f.kind === 'delivered' || f.kind === 'read'
          ? [{ userId: f.userId, jobId: f.jobId, phone: f.phone, kind: f.kind, at: f.at }]
          : [],
      );
      const deltas = await this.results.foldReceipts(em, receipts);
      // A message delivered after the account's last refusal ends its row of refusals.
      await this.refusals.endStreaks(em, receipts);
      for (const f of folds) {
        if (f.kind === 'refused') published.push(...(await this.refusals.apply(em, f)));
        if (f.kind !== 'replied') continue;
        const d = await this.results.foldReply(em, f.userId, f.phone, f.at, f.reply);
        if (d) deltas.push(d);
      }
      await this.results.addCounts(em, deltas);
      return deltas;
    });
    this.publisher.publish(published);
    return deltas;
  }
}
