import { createHash } from 'node:crypto';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { OutboxPublisher, OutboxRepository, Transactions, type OutboxEvent } from '@bns/service-kit';
import {
  backoffMs,
  normalizePhone,
  parseIdempotencyKey,
  SESSION_MESSAGES,
  withRetry,
  type BackoffPolicy,
} from '@bns/contracts';
import { countReceipt } from '../metrics/sessions.metrics.js';
import { safeError } from '../redact.js';
import type { AckStatus } from './engines/engine.types.js';
import type { Receipt } from './send.entity.js';
import { FurthestReceipts } from './furthest-receipts.js';
import { SendsRepository } from './sends.repository.js';
import { LidsRepository, type LidPhone } from './lids.repository.js';

/** Waits between tries of a Postgres write: 250 ms, 500 ms, … at most 5 s (within each call's budget). */
const RECORD_RETRY: BackoffPolicy = { baseMs: 250, maxMs: 5000 };

/** How long a receipt or an inbound message is retried while Postgres is unreachable. */
const WRITE_RETRY_BUDGET_MS = 10 * 60_000;
/** How long an ack waits for the ledger to record its send (a fast ack overtakes the ledger update). */
const UNKNOWN_MESSAGE_BUDGET_MS = 60_000;

/** Most acks written in one transaction. */
const ACK_BATCH_MAX = 500;
/**
 * How long the first ack of a quiet spell waits for others to share its transaction. At the spec's
 * pace acks come a few milliseconds apart, and each alone paid its own transaction, lock statement,
 * update and outbox insert, each planned afresh (jobs-pacing, 1,000 accounts: 1.3 of each per
 * message); a receipt's tick is not worth that hurry.
 */
const ACK_GATHER_MS = 20;
/** Waits before an ack is tried again (its send not recorded yet, or Postgres down): 50 ms doubling to 2 s. */
const ACK_RETRY = { baseMs: 50, maxMs: 2000 } as const;

interface PendingAck {
  userId: string;
  messageId: string;
  status: 'delivered' | 'read' | 'failed';
  /** `failed` only: why, in plain words (the engine's; WhatsApp's refusal by default). */
  reason?: string;
  /** The recipient's LID when the receipt named it: paired with the send's number. */
  lid?: string;
  arrived: number;
  /** Not before this time (epoch ms): retried after a wait. */
  notBefore: number;
  tries: number;
  resolve: () => void;
}

export interface InboundMessage {
  /** The sender's number in international digits, when WhatsApp gave it. */
  from?: string;
  /** The sender's LID (`<digits>@lid`), when WhatsApp named the sender by it. */
  lid?: string;
  text: string;
  at: Date;
  messageId: string;
  /** WhatsApp's id of our message this one answers. */
  quotedMessageId?: string;
}

/** A stable event id from its parts, so a redelivered ack or message is one event everywhere. */
function eventIdOf(kind: string, ...parts: string[]): string {
  return `${kind}:${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)}`;
}

/**
 * The durable events of the sessions service, never fire-and-forget: delivered/read/failed receipts of job sends
 * (`events.message.status`) and inbound messages (`events.message.received`). Each is written to the
 * outbox in the same transaction as the state change it reports (the send's receipt), then published
 * by the outbox publisher; a Postgres outage is retried, a NATS outage waits in the outbox.
 */
@Injectable()
export class MessageEvents implements BeforeApplicationShutdown {
  private readonly logger = new Logger('MessageEvents');
  private stopping = false;
  /** Work in arrival order per key (one user's inbound messages). */
  private readonly chains = new Map<string, Promise<void>>();
  /** Acks not written yet, in arrival order. */
  private acks: PendingAck[] = [];
  private flushing = false;
  private flushTimer?: NodeJS.Timeout;
  /** When `flushTimer` fires (epoch ms). */
  private flushAt = 0;
  /** What this process published of each recent message: a repeated or older ack is no event. */
  private readonly published = new FurthestReceipts();

  constructor(
    private readonly tx: Transactions,
    private readonly sends: SendsRepository,
    private readonly outbox: OutboxRepository,
    private readonly publisher: OutboxPublisher,
    private readonly lids: LidsRepository,
  ) {}

  /** The acks already due are written once more; later retries are dropped (the process is going). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.flushing) await this.flushAcks();
  }

  /**
   * An ack from the engine. Resolves once it is recorded (or known to need nothing); never rejects.
   * One message's acks are recorded in the order they came (delivered before read), even while retried.
   * Acks are written in batches: while one batch commits, the next gathers, so at a high rate many
   * receipts share one transaction (one lock, one update, one outbox insert); at a low rate the first
   * waits ACK_GATHER_MS for company.
   */
  recordAck(userId: string, messageId: string, status: AckStatus, reason?: string, lid?: string): Promise<void> {
    if (status !== 'delivered' && status !== 'read' && status !== 'failed') return Promise.resolve(); // jobs reports sent
    return new Promise<void>((resolve) => {
      this.acks.push({
        userId,
        messageId,
        status,
        ...(status === 'failed' ? { reason } : {}),
        ...(lid ? { lid } : {}),
        arrived: Date.now(),
        notBefore: 0,
        tries: 0,
        resolve,
      });
      this.flushSoon(ACK_GATHER_MS);
    });
  }

  /** WhatsApp said which number a LID is: remembered for LID-only replies (in the user's inbound order). Never rejects. */
  learnContact(userId: string, lid: string, phone: string): Promise<void> {
    return this.inOrder(`inbound\u0000${userId}`, () =>
      this.lids.learnOne({ userId, lid, phone }).catch((err: unknown) => {
        this.logger.warn({ err: safeError(err), userId }, 'a LID pairing was not recorded');
      }),
    );
  }

  /** A message a recipient wrote to the user, in arrival order per user. Never rejects. */
  recordInbound(userId: string, message: InboundMessage): Promise<void> {
    return this.inOrder(`inbound\u0000${userId}`, () => this.writeInbound(userId, message));
  }

  private inOrder(key: string, work: () => Promise<void>): Promise<void> {
    const run = (this.chains.get(key) ?? Promise.resolve()).then(work);
    this.chains.set(key, run);
    void run.then(() => {
      if (this.chains.get(key) === run) this.chains.delete(key);
    });
    return run;
  }

  /** Flushes in `delayMs`, or sooner if a flush is already due sooner. */
  private flushSoon(delayMs = 0): void {
    if (this.flushing) return;
    const at = Date.now() + delayMs;
    if (this.flushTimer) {
      if (this.flushAt <= at) return;
      clearTimeout(this.flushTimer);
    }
    this.flushAt = at;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flushAcks();
    }, delayMs);
  }

  /**
   * Writes the acks that are due, oldest first, then goes on while more wait. An ack whose send the
   * ledger does not show yet waits (and so do the later acks of that message, to keep their order);
   * after UNKNOWN_MESSAGE_BUDGET_MS it is dropped. A Postgres failure retries the batch, for up to
   * WRITE_RETRY_BUDGET_MS per ack.
   */
  private async flushAcks(): Promise<void> {
    this.flushing = true;
    try {
      for (;;) {
        const now = Date.now();
        const blocked = new Set<string>();
        const batch: PendingAck[] = [];
        for (const ack of this.acks) {
          const id = `${ack.userId}\u0000${ack.messageId}`;
          if (blocked.has(id)) continue;
          if (ack.notBefore > now || batch.length >= ACK_BATCH_MAX) {
            blocked.add(id);
            continue;
          }
          batch.push(ack);
        }
        if (batch.length === 0) break;
        const taken = new Set(batch);
        this.acks = this.acks.filter((a) => !taken.has(a));
        let waiting: PendingAck[];
        try {
          waiting = await this.writeAcks(batch);
        } catch (err) {
          const retry = batch.filter((a) => !this.stopping && Date.now() - a.arrived < WRITE_RETRY_BUDGET_MS);
          for (const a of batch) if (!retry.includes(a)) a.resolve();
          if (batch.length > retry.length)
            this.logger.error(
              { err: safeError(err), receipts: batch.length - retry.length },
              'receipts lost: Postgres stayed unreachable',
            );
          else if (batch.some((a) => a.tries === 0))
            this.logger.warn({ err: safeError(err), receipts: batch.length }, 'receipts not recorded yet; retrying');
          waiting = retry;
        }
        // Back to the front, in their order: they come before anything that arrived meanwhile.
        for (const a of waiting) {
          a.tries++;
          a.notBefore = Date.now() + backoffMs(a.tries, ACK_RETRY);
        }
        this.acks = [...waiting, ...this.acks];
        if (this.stopping) break;
      }
    } finally {
      this.flushing = false;
    }
    if (this.stopping) {
      for (const a of this.acks.splice(0)) a.resolve();
      return;
    }
    if (this.acks.length > 0) this.flushSoon(Math.max(1, Math.min(...this.acks.map((a) => a.notBefore)) - Date.now()));
  }

  /**
   * One transaction for a batch; answers the acks that must wait for their send to be recorded. An ack
   * writes nothing on the ledger: its event goes to the outbox (and a LID it names to the pairs), and
   * what was published is remembered once the transaction commits (FurthestReceipts).
   */
  private async writeAcks(batch: PendingAck[]): Promise<PendingAck[]> {
    const waiting: PendingAck[] = [];
    const done: PendingAck[] = [];
    const news = new Map<string, Receipt>();
    const rows = await this.tx.run(async (em) => {
      waiting.length = 0;
      done.length = 0;
      news.clear();
      const found = await this.sends.sentByMessageIds(em, batch);
      const byMessage = new Map(found.map((r) => [`${r.userId}\u0000${r.messageId}`, r]));
      const held = new Set<string>();
      const pairs: LidPhone[] = [];
      const events: OutboxEvent<'events.message.status'>[] = [];
      for (const ack of batch) {
        const id = `${ack.userId}\u0000${ack.messageId}`;
        const send = byMessage.get(id);
        if (held.has(id) || (!send && Date.now() - ack.arrived < UNKNOWN_MESSAGE_BUDGET_MS)) {
          held.add(id);
          waiting.push(ack);
          continue;
        }
        done.push(ack);
        if (send && ack.lid) {
          const phone = normalizePhone(send.toNumber, 'international');
          if (phone) pairs.push({ userId: ack.userId, lid: ack.lid, phone });
        }
        const receipt: Receipt = ack.status;
        const earlier = news.get(id);
        if (!send || (earlier ? !FurthestReceipts.moves(earlier, receipt) : !this.published.isNews(id, receipt)))
          continue;
        news.set(id, receipt);
        const parsed = send.kind === 'job' ? parseIdempotencyKey(send.idempotencyKey) : undefined;
        if (!parsed) continue;
        events.push({
          subject: 'events.message.status',
          payload: {
            eventId: eventIdOf('message-status', ack.userId, ack.messageId, ack.status),
            userId: ack.userId,
            at: new Date().toISOString(),
            jobId: parsed.jobId,
            recipient: parsed.recipient,
            messageId: ack.messageId,
            idempotencyKey: send.idempotencyKey,
            status: ack.status,
            content: send.text,
            ...(ack.lid ? { lid: ack.lid } : {}),
            // A failed receipt comes after the send was accepted (and reported sent): WhatsApp refused it later.
            ...(ack.status === 'failed'
              ? { error: ack.reason ?? SESSION_MESSAGES.sendRefusedAfterAccept, refused: true }
              : {}),
          },
        });
      }
      await this.lids.learn(pairs, em);
      return this.outbox.add(em, events);
    });
    for (const [id, receipt] of news) this.published.remember(id, receipt);
    for (const row of rows) countReceipt((row.payload as { status: 'delivered' | 'read' | 'failed' }).status);
    this.publisher.publish(rows);
    for (const ack of done) ack.resolve();
    return waiting;
  }

  /**
   * The sender's number: WhatsApp's; else, for a LID-only sender, the number this account learned for
   * that LID, or the number of our message the reply quotes. Never a guess (by name or otherwise).
   */
  private async senderPhone(userId: string, message: InboundMessage): Promise<string | undefined> {
    if (message.from) return message.from;
    const known = message.lid ? await this.lids.phoneOf(userId, message.lid) : undefined;
    if (known) return known;
    if (!message.quotedMessageId) return undefined;
    const answered = await this.sends.recipientOfMessage(userId, message.quotedMessageId);
    return answered ? normalizePhone(answered, 'international') : undefined;
  }

  private async writeInbound(userId: string, message: InboundMessage): Promise<void> {
    try {
      await withRetry(
        async () => {
          const from = await this.senderPhone(userId, message);
          const event: OutboxEvent<'events.message.received'> = {
            subject: 'events.message.received',
            payload: {
              eventId: eventIdOf('message-received', userId, message.messageId),
              userId,
              at: message.at.toISOString(),
              from: from ?? '',
              ...(message.lid ? { lid: message.lid } : {}),
              ...(message.quotedMessageId ? { quotedMessageId: message.quotedMessageId } : {}),
              // Postgres (jsonb) refuses NUL; WhatsApp text never needs it.
              text: message.text.replaceAll('\u0000', ''),
              messageId: message.messageId,
            },
          };
          const rows = await this.tx.run(async (em) => {
            // A LID-only sender found by the reply it quotes: the pair is learned with the message.
            if (from && message.lid) await this.lids.learn([{ userId, lid: message.lid, phone: from }], em);
            return this.outbox.add(em, [event]);
          });
          this.publisher.publish(rows);
        },
        {
          ...RECORD_RETRY,
          budgetMs: WRITE_RETRY_BUDGET_MS,
          cancelled: () => this.stopping,
          onRetry: (err, attempt) => {
            if (attempt === 1)
              this.logger.warn({ err: safeError(err), userId }, 'inbound message not recorded yet; retrying');
          },
        },
      );
    } catch (err) {
      this.logger.error({ err: safeError(err), userId }, 'inbound message lost: Postgres stayed unreachable');
    }
  }
}
