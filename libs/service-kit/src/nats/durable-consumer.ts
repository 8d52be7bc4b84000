import { Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
} from '@nats-io/jetstream';
import { backoffMs, type BackoffPolicy } from '@bns/contracts';

const MS_NS = 1_000_000;

/** What `decode` answers for a message that can never be handled: it is terminated, not retried. */
export class Poison {
  constructor(readonly problem: string) {}
}

/** `decode`'s answer for a message this consumer has nothing to do with: acked at once. */
export const SKIP: unique symbol = Symbol('skip');

/** A decoded message and the message it came in. */
export interface Delivery<T> {
  payload: T;
  msg: JsMsg;
}

/** A message as it came in, decoded (one to SKIP is acked as it comes). */
interface Decoded<T> {
  msg: JsMsg;
  payload: T | Poison | DecodeFailed;
}

/** `decode` threw (a fault of the decoder, not of the message): the message comes back later. */
class DecodeFailed {
  constructor(readonly err: unknown) {}
}

/** The logger the loop writes to (Nest's Logger; pino-style `(fields, message)` calls). */
export type ConsumerLogger = Pick<Logger, 'log' | 'warn' | 'error'>;

export interface DurableConsumerOptions<T> {
  stream: string;
  /** Durable name: shared by the replicas, which split the work; the server remembers what was acked. */
  durable: string;
  /** One subject: nats-server 2.9 (Debian's) has no multi-filter consumers. */
  filterSubject: string;
  /** Where a consumer created now starts; every message the stream still holds by default. */
  deliverPolicy?: DeliverPolicy;
  /** How long the server waits for an ack before it redelivers. */
  ackWaitMs: number;
  /** Deliveries of a message before it is given up (terminated). */
  maxDeliver: number;
  maxAckPending: number;
  /** Messages handed to `handleBatch` together (up to this many); 1 = one at a time. */
  batchMax?: number;
  /** Messages the server may push ahead of handling; 2 × batchMax by default. */
  prefetch?: number;
  /**
   * How long the first message of a batch waits for others to join it (ms; 0 = the next turn). At a
   * low rate a few tens of ms turn one transaction per message into one per batch.
   */
  gatherMs?: number;
  /**
   * A payload that must not wait for `gatherMs` (a prompt among reports): when one comes in, the
   * batch it joins is handled on the next turn.
   */
  urgent?(payload: T): boolean;
  /**
   * Turns a message's JSON body (undefined when it is not JSON) into the payload, `new Poison(problem)`
   * when it can never be handled, or `SKIP` when there is nothing to do. A problem is logged: it must
   * name what is wrong, never a value that may be personal data.
   */
  decode(body: unknown, msg: JsMsg): T | Poison | typeof SKIP;
  /** Handles one message; it is acked once this resolves, and redelivered after a back-off when it throws. */
  handle(payload: T, msg: JsMsg): Promise<unknown>;
  /**
   * Handles several messages at once (e.g. in one transaction); all are acked once it resolves. When it
   * throws, each is handled on its own with `handle`, so one bad message does not hold back the rest.
   */
  handleBatch?(deliveries: ReadonlyArray<Delivery<T>>): Promise<unknown>;
  /** Log fields naming a payload without personal data (e.g. its event id). */
  describe?(payload: T): Record<string, unknown>;
  /** Wait before delivery n + 1 after a failed delivery n: 1 s, 2 s, 4 s, … 30 s by default. */
  redelivery?: BackoffPolicy;
  /** Pause before subscribing again when the subscription failed (NATS restart, consumer gone). */
  restartDelayMs?: number;
  /** Words for the log lines ("event", "receipt", …). */
  noun?: string;
  logger?: ConsumerLogger;
}

/** An error as a log field: no message text that may quote a number or a database row. */
export function redactedError(err: unknown): { name: string; message: string; code?: string } {
  const name = err instanceof Error ? err.name : typeof err;
  const raw = err instanceof Error ? err.message : String(err);
  const code =
    typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
      ? (err as { code: string }).code
      : undefined;
  return { name, message: raw.replace(/\d{6,}/g, '<digits>').slice(0, 300), ...(code ? { code } : {}) };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * One durable JetStream pull consumer and the loop around it: creates the consumer (or brings an
 * existing one's ack wait, max deliver and max ack pending up to date), consumes until stopped,
 * decodes each message, acks it only after its handler resolved, naks a failure with a `backoffMs`
 * delay (terminating it after the last delivery), terminates messages it cannot decode, and starts
 * over after NATS restarts. Messages are handled in arrival order, one batch at a time.
 *
 * `start` once, `stop` on shutdown: stop finishes the batch in hand and hands the rest back with a
 * nak, so another replica (or the next start) gets them at once.
 */
export class DurableConsumer<T> {
  private readonly logger: ConsumerLogger;
  private readonly batchMax: number;
  private readonly redelivery: BackoffPolicy;
  private readonly noun: string;
  /** Messages in, decoded as they came (so `urgent` can end a gather), handled in batches. */
  private readonly buffer: Array<Decoded<T>> = [];
  private pumping: Promise<void> | undefined;
  /** Ends the gather under way now (the next batch starts on the next turn); undefined when none is. */
  private endGather: (() => void) | undefined;
  private messages: ConsumerMessages | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: DurableConsumerOptions<T>,
  ) {
    this.logger = options.logger ?? new Logger(`DurableConsumer ${options.durable}`);
    this.batchMax = Math.max(1, options.batchMax ?? 1);
    this.redelivery = options.redelivery ?? { baseMs: 1000, maxMs: 30_000 };
    this.noun = options.noun ?? 'message';
  }

  /** Ensures the consumer (throws when NATS cannot), then consumes in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    await this.ensure();
    this.running = this.run();
  }

  /** Stops pulling, waits for the batch in hand and naks what is still queued. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.endGather?.();
    await this.messages?.close().catch(() => undefined);
    await this.running;
    await this.pumping;
    for (const d of this.buffer.splice(0)) d.msg.nak();
  }

  /** Creates the durable consumer, or brings an existing one's tunable settings up to date. */
  async ensure(): Promise<void> {
    const { stream, durable } = this.options;
    const jsm = await jetstreamManager(this.nc);
    const tunables = {
      ack_wait: this.options.ackWaitMs * MS_NS,
      max_deliver: this.options.maxDeliver,
      max_ack_pending: this.options.maxAckPending,
    };
    try {
      await jsm.consumers.info(stream, durable);
      await jsm.consumers.update(stream, durable, tunables);
    } catch {
      await jsm.consumers
        .add(stream, {
          durable_name: durable,
          filter_subject: this.options.filterSubject,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: this.options.deliverPolicy ?? DeliverPolicy.All,
          ...tunables,
        })
        .catch(async (err: unknown) => {
          // Another replica created it at the same moment.
          await jsm.consumers.info(stream, durable).catch(() => {
            throw err;
          });
        });
    }
  }

  /** Consumes until stopped, starting over if the subscription fails (unacked messages come back). */
  private async run(): Promise<void> {
    const { stream, durable } = this.options;
    let restarts = 0;
    while (!this.stopping) {
      try {
        if (restarts > 0) await this.ensure(); // the consumer may be gone with a NATS store that was lost
        const consumer = await jetstream(this.nc).consumers.get(stream, durable);
        const messages = await consumer.consume({
          max_messages: this.options.prefetch ?? this.batchMax * 2,
          callback: (m) => this.enqueue(m),
        });
        this.messages = messages;
        if (this.stopping) await messages.close().catch(() => undefined);
        const err = await messages.closed();
        if (err && !this.stopping) throw err;
      } catch (err) {
        if (!this.stopping) {
          restarts++;
          this.logger.error({ err: redactedError(err), durable }, `${this.noun} consumer stopped; restarting`);
          await sleep(this.options.restartDelayMs ?? 1000);
        }
      }
    }
  }

  /**
   * Messages queue up while a batch is being handled; the next batch takes whatever has arrived by
   * then (up to batchMax). The server's max_ack_pending bounds the queue.
   */
  private enqueue(m: JsMsg): void {
    // Not nak() without a delay: the server would hand it straight back to this closing subscription.
    if (this.stopping) return m.nak(backoffMs(1, this.redelivery));
    const payload = this.decode(m);
    // Nothing to do: acked now, so it takes no place in a batch or among the server's pending acks.
    if (payload === SKIP) return m.ack();
    const d: Decoded<T> = { msg: m, payload };
    this.buffer.push(d);
    if (this.endGather && this.isUrgent(d)) this.endGather();
    this.kick();
  }

  private decode(msg: JsMsg): Decoded<T>['payload'] | typeof SKIP {
    let body: unknown;
    try {
      body = msg.json();
    } catch {
      body = undefined;
    }
    try {
      return this.options.decode(body, msg);
    } catch (err) {
      return new DecodeFailed(err);
    }
  }

  private isUrgent({ payload }: Decoded<T>): boolean {
    if (payload instanceof Poison || payload instanceof DecodeFailed) return false;
    return this.options.urgent?.(payload) ?? false;
  }

  private kick(): void {
    if (this.pumping || this.buffer.length === 0 || this.stopping) return;
    // Start on the next turn, so the rest of the messages that came in the same read join the batch;
    // or, with gatherMs, a little later, so those that come soon after join it too (unless one of
    // them is urgent, or a batch is there already).
    const waits = this.buffer.length < this.batchMax && !this.buffer.some((d) => this.isUrgent(d));
    const gatherMs = waits ? (this.options.gatherMs ?? 0) : 0;
    this.pumping = new Promise<void>((resolve) => {
      if (gatherMs <= 0) return void setImmediate(resolve);
      const timer = setTimeout(resolve, gatherMs);
      this.endGather = () => {
        this.endGather = undefined;
        clearTimeout(timer);
        setImmediate(resolve);
      };
    })
      .then(() => {
        this.endGather = undefined;
        return this.pump();
      })
      .finally(() => {
        this.pumping = undefined;
        // Anything queued between the last batch and now must not wait for the next message.
        this.kick();
      });
  }

  private async pump(): Promise<void> {
    while (this.buffer.length > 0 && !this.stopping) {
      const batch = this.buffer.splice(0, this.batchMax);
      try {
        await this.handleBatch(batch);
      } catch (err) {
        this.logger.error(
          { err: redactedError(err), durable: this.options.durable },
          `handling ${this.noun}s failed unexpectedly; they will be redelivered`,
        );
        for (const d of batch) d.msg.nak(backoffMs(1, this.redelivery));
      }
    }
  }

  private async handleBatch(batch: Array<Decoded<T>>): Promise<void> {
    const deliveries: Array<Delivery<T>> = [];
    for (const { msg, payload } of batch) {
      if (payload instanceof DecodeFailed) {
        this.logger.error(
          { err: redactedError(payload.err), durable: this.options.durable, subject: msg.subject, seq: msg.seq },
          `decoding a ${this.noun} failed unexpectedly; it will be redelivered`,
        );
        msg.nak(backoffMs(msg.info.deliveryCount, this.redelivery));
      } else if (payload instanceof Poison) {
        // Subject, sequence and the problem only: never the body (numbers, texts, tokens).
        this.logger.warn(
          { durable: this.options.durable, subject: msg.subject, seq: msg.seq, problem: payload.problem.slice(0, 200) },
          `malformed ${this.noun} dropped`,
        );
        // No reason: nats-server 2.9 does not understand `+TERM <reason>` and would keep the message pending.
        msg.term();
      } else {
        deliveries.push({ payload, msg });
      }
    }
    if (deliveries.length === 0) return;
    if (deliveries.length > 1 && this.options.handleBatch) {
      try {
        await this.options.handleBatch(deliveries);
        for (const d of deliveries) d.msg.ack();
        return;
      } catch (err) {
        this.logger.warn(
          { err: redactedError(err), durable: this.options.durable, size: deliveries.length },
          `${this.noun} batch failed; handling them one by one`,
        );
      }
    }
    // One bad message must not hold back the rest of its batch.
    for (const d of deliveries) {
      try {
        await this.options.handle(d.payload, d.msg);
        d.msg.ack();
      } catch (err) {
        this.giveBack(d, err);
      }
    }
  }

  /** A failed delivery: redelivered after a back-off, or terminated after the last one. */
  private giveBack(d: Delivery<T>, err: unknown): void {
    const delivery = d.msg.info.deliveryCount;
    const fields = {
      err: redactedError(err),
      durable: this.options.durable,
      subject: d.msg.subject,
      ...this.options.describe?.(d.payload),
    };
    if (delivery >= this.options.maxDeliver) {
      this.logger.error(fields, `${this.noun} could not be handled; dropped after the last delivery`);
      d.msg.term();
      return;
    }
    this.logger.warn({ ...fields, delivery }, `${this.noun} not handled; will retry`);
    d.msg.nak(backoffMs(delivery, this.redelivery));
  }
}
