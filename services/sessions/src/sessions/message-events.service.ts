import { createHash } from 'node:crypto';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { OutboxPublisher, OutboxRepository, Transactions, type OutboxEvent } from '@bns/service-kit';
import { parseIdempotencyKey, SESSION_MESSAGES, withRetry, type BackoffPolicy } from '@bns/contracts';
import { countReceipt } from '../metrics/sessions.metrics.js';
import { safeError } from '../redact.js';
import type { AckStatus } from './engines/engine.types.js';
import { RECEIPT_RANK, type Receipt } from './send.entity.js';
import { SendsRepository } from './sends.repository.js';

/** Waits between tries of a Postgres write: 250 ms, 500 ms, … at most 5 s (within each call's budget). */
const RECORD_RETRY: BackoffPolicy = { baseMs: 250, maxMs: 5000 };

/** How long a receipt or an inbound message is retried while Postgres is unreachable. */
const WRITE_RETRY_BUDGET_MS = 10 * 60_000;
/** How long an ack waits for the ledger to record its send (a fast ack overtakes the ledger update). */
const UNKNOWN_MESSAGE_BUDGET_MS = 60_000;

class SendNotRecordedYet extends Error {}

export interface InboundMessage {
  /** The sender's number in international digits. */
  from: string;
  text: string;
  at: Date;
  messageId: string;
}

/** A stable event id from its parts, so a redelivered ack or message is one event everywhere. */
function eventIdOf(kind: string, ...parts: string[]): string {
  return `${kind}:${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)}`;
}

/**
 * The durable events of the sessions service (issue 15): delivered/read/failed receipts of job sends
 * (`events.message.status`) and inbound messages (`events.message.received`). Each is written to the
 * outbox in the same transaction as the state change it reports (the send's receipt), then published
 * by the outbox publisher; a Postgres outage is retried, a NATS outage waits in the outbox.
 */
@Injectable()
export class MessageEvents implements BeforeApplicationShutdown {
  private readonly logger = new Logger('MessageEvents');
  private stopping = false;
  /** Work in arrival order per key (one message's acks; one user's inbound messages). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly tx: Transactions,
    private readonly sends: SendsRepository,
    private readonly outbox: OutboxRepository,
    private readonly publisher: OutboxPublisher,
  ) {}

  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  /**
   * An ack from the engine. Resolves once it is recorded (or known to need nothing); never rejects.
   * One message's acks are recorded in the order they came (delivered before read), even while retried.
   */
  recordAck(userId: string, messageId: string, status: AckStatus): Promise<void> {
    if (status !== 'delivered' && status !== 'read' && status !== 'failed') return Promise.resolve(); // jobs reports sent
    return this.inOrder(`ack\u0000${userId}\u0000${messageId}`, () => this.writeAck(userId, messageId, status));
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

  private async writeAck(userId: string, messageId: string, status: 'delivered' | 'read' | 'failed'): Promise<void> {
    const started = Date.now();
    try {
      await withRetry(
        async () => {
          const rows = await this.tx.run(async (em) => {
            const send = await this.sends.lockSentByMessageId(em, userId, messageId);
            if (!send) {
              if (Date.now() - started < UNKNOWN_MESSAGE_BUDGET_MS) throw new SendNotRecordedYet();
              return [];
            }
            const receipt: Receipt = status;
            if (send.receipt && RECEIPT_RANK[send.receipt] >= RECEIPT_RANK[receipt]) return [];
            await this.sends.setReceipt(em, userId, send.idempotencyKey, receipt);
            const parsed = send.kind === 'job' ? parseIdempotencyKey(send.idempotencyKey) : undefined;
            if (!parsed) return [];
            const event: OutboxEvent<'events.message.status'> = {
              subject: 'events.message.status',
              payload: {
                eventId: eventIdOf('message-status', userId, messageId, status),
                userId,
                at: new Date().toISOString(),
                jobId: parsed.jobId,
                recipient: parsed.recipient,
                messageId,
                idempotencyKey: send.idempotencyKey,
                status,
                content: send.text,
                ...(status === 'failed' ? { error: SESSION_MESSAGES.sendRejected } : {}),
              },
            };
            return this.outbox.add(em, [event]);
          });
          if (rows.length > 0) countReceipt(status);
          this.publisher.publish(rows);
        },
        {
          ...RECORD_RETRY,
          budgetMs: WRITE_RETRY_BUDGET_MS,
          cancelled: () => this.stopping,
          onRetry: (err, attempt) => {
            if (!(err instanceof SendNotRecordedYet) && attempt === 1) this.logger.warn({ err: safeError(err), userId }, 'receipt not recorded yet; retrying');
          },
        },
      );
    } catch (err) {
      if (!(err instanceof SendNotRecordedYet)) this.logger.error({ err: safeError(err), userId, status }, 'receipt lost: Postgres stayed unreachable');
    }
  }

  private async writeInbound(userId: string, message: InboundMessage): Promise<void> {
    const event: OutboxEvent<'events.message.received'> = {
      subject: 'events.message.received',
      payload: {
        eventId: eventIdOf('message-received', userId, message.messageId),
        userId,
        at: message.at.toISOString(),
        from: message.from,
        // Postgres (jsonb) refuses NUL; WhatsApp text never needs it.
        text: message.text.replaceAll('\u0000', ''),
        messageId: message.messageId,
      },
    };
    try {
      await withRetry(
        async () => {
          const rows = await this.tx.run((em) => this.outbox.add(em, [event]));
          this.publisher.publish(rows);
        },
        {
          ...RECORD_RETRY,
          budgetMs: WRITE_RETRY_BUDGET_MS,
          cancelled: () => this.stopping,
          onRetry: (err, attempt) => {
            if (attempt === 1) this.logger.warn({ err: safeError(err), userId }, 'inbound message not recorded yet; retrying');
          },
        },
      );
    } catch (err) {
      this.logger.error({ err: safeError(err), userId }, 'inbound message lost: Postgres stayed unreachable');
    }
  }
}
