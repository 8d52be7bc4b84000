import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { EVENTS_STREAM, normalizeHkPhone, type EventKey } from '@bns/contracts';
import { NATS_CONNECTION, SERVICE_ENV, Transactions } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { ResultsRepository, type FoldDelta } from './results.repository.js';

/** The events the report folds in. */
export const RECEIPT_SUBJECTS = ['events.message.status', 'events.message.received'] as const satisfies readonly EventKey[];

const MS_NS = 1_000_000;
const BATCH_MAX = 200;
const ACK_WAIT_MS = 10_000;
const MAX_DELIVER = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A receipt or reply to fold; anything else on the subjects (sent, failed: jobs wrote those itself) is skipped. */
export type Fold =
  | { kind: 'delivered' | 'read'; userId: string; jobId: string; phone: string; at: Date }
  | { kind: 'replied'; userId: string; phone: string; at: Date };

/** What an event says for the report, or undefined when it says nothing (or is malformed). */
export function foldOf(subject: string, body: unknown): Fold | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = body as Record<string, unknown>;
  if (typeof e.userId !== 'string' || typeof e.at !== 'string') return undefined;
  const at = new Date(e.at);
  if (Number.isNaN(at.getTime())) return undefined;
  if (subject === 'events.message.status') {
    if ((e.status !== 'delivered' && e.status !== 'read') || typeof e.jobId !== 'string' || !UUID.test(e.jobId)) return undefined;
    const phone = normalizeHkPhone(e.recipient);
    return phone ? { kind: e.status, userId: e.userId, jobId: e.jobId, phone, at } : undefined;
  }
  if (subject === 'events.message.received') {
    const phone = normalizeHkPhone(e.from);
    return phone ? { kind: 'replied', userId: e.userId, phone, at } : undefined;
  }
  return undefined;
}

/**
 * Folds delivered/read receipts (`events.message.status`, published by sessions with the job id) and
 * replies (`events.message.received`) into the report, through durable JetStream pull consumers, one
 * per subject (nats-server 2.9 has no multi-filter consumers). Folding sets each time once, so a
 * redelivered event changes nothing; an event is acked only after its transaction committed.
 */
@Injectable()
export class ReceiptsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ReceiptsConsumer');
  private readonly subscriptions = new Set<ConsumerMessages>();
  private readonly pumps = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
    private readonly tx: Transactions,
    private readonly results: ResultsRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const subject of RECEIPT_SUBJECTS) {
      const durable = `${this.env.JOBS_RESULTS_CONSUMER}-${subject.replaceAll('.', '-')}`;
      await this.ensureConsumer(durable, subject);
      void this.run(durable);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.subscriptions].map((m) => m.close().catch(() => undefined)));
    await Promise.all([...this.pumps]);
  }

  /** Applies folds in one transaction; returns what they changed. Exposed for in-process tests. */
  async apply(folds: readonly Fold[]): Promise<FoldDelta[]> {
    return this.tx.run(async (em) => {
      const deltas: FoldDelta[] = [];
      for (const f of folds) {
        const d =
          f.kind === 'replied'
            ? await this.results.foldReply(em, f.userId, f.phone, f.at)
            : await this.results.foldReceipt(em, { userId: f.userId, jobId: f.jobId, phone: f.phone, kind: f.kind, at: f.at });
        if (d) deltas.push(d);
      }
      await this.results.addCounts(em, deltas);
      return deltas;
    });
  }

  private async ensureConsumer(durable: string, subject: string): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const tunables = { ack_wait: ACK_WAIT_MS * MS_NS, max_deliver: MAX_DELIVER, max_ack_pending: BATCH_MAX * 4 };
    try {
      await jsm.consumers.info(EVENTS_STREAM, durable);
      await jsm.consumers.update(EVENTS_STREAM, durable, tunables);
    } catch {
      await jsm.consumers
        .add(EVENTS_STREAM, {
          durable_name: durable,
          filter_subject: subject,
          ack_policy: AckPolicy.Explicit,
          // Receipts of jobs sent before this consumer existed are folded in too.
          deliver_policy: DeliverPolicy.All,
          ...tunables,
        })
        .catch(async (err: unknown) => {
          // Another replica created it at the same moment.
          await jsm.consumers.info(EVENTS_STREAM, durable).catch(() => {
            throw err;
          });
        });
    }
  }

  private async run(durable: string): Promise<void> {
    while (!this.stopping) {
      try {
        const consumer = await jetstream(this.nc).consumers.get(EVENTS_STREAM, durable);
        const messages = await consumer.fetch({ max_messages: BATCH_MAX, expires: 2000 });
        this.subscriptions.add(messages);
        const batch: JsMsg[] = [];
        for await (const m of messages) batch.push(m);
        this.subscriptions.delete(messages);
        if (batch.length > 0) {
          const pump = this.handle(batch);
          this.pumps.add(pump);
          await pump.finally(() => this.pumps.delete(pump));
        }
      } catch (err) {
        if (!this.stopping) {
          this.logger.warn({ err, durable }, 'receipts consumer failed; retrying');
          await sleep(1000);
        }
      }
    }
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    const folds: Array<{ m: JsMsg; f: Fold }> = [];
    for (const m of batch) {
      let body: unknown;
      try {
        body = m.json();
      } catch {
        body = undefined;
      }
      const f = foldOf(m.subject, body);
      if (f) folds.push({ m, f });
      else m.ack();
    }
    if (folds.length === 0) return;
    try {
      await this.apply(folds.map((x) => x.f));
      for (const x of folds) x.m.ack();
      return;
    } catch (err) {
      this.logger.warn({ err, size: folds.length }, 'receipts batch failed; folding one by one');
    }
    for (const x of folds) {
      try {
        await this.apply([x.f]);
        x.m.ack();
      } catch (err) {
        if (x.m.info.deliveryCount >= MAX_DELIVER) {
          this.logger.error({ err, subject: x.m.subject }, 'receipt could not be folded; dropped after the last delivery');
          x.m.term();
        } else {
          x.m.nak(Math.min(30_000, 500 * 2 ** x.m.info.deliveryCount));
        }
      }
    }
  }
}
