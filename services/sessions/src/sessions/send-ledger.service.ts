import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppError } from '@bns/service-kit';
import { ErrorKind, LIMITS, parseIdempotencyKey, SESSION_MESSAGES, SessionsErrorCode, type SessionSendReply, type SessionSendRequest } from '@bns/contracts';
import type { AckStatus, EngineSession } from './engines/engine.types.js';
import { SessionEvents } from './session-events.js';

/** `job` sends come from bulk jobs and report acks; `welcome` is the auto-login message. */
export type SendKind = 'job' | 'welcome';

interface LedgerRow {
  status: 'sending' | 'sent' | 'failed';
  message_id: string | null;
  sent_at: Date | null;
  error_code: string | null;
  error_message: string | null;
  stale: boolean;
}

/** A claim older than this is from a process that died mid-send; the key may be tried again. */
const STALE_CLAIM_SECONDS = 120;
const KEY_MAX = 300;

/**
 * The send ledger (`sessions.sends`): one row per idempotency key. A key that was sent answers its
 * first result and sends nothing; a key refused as "not on WhatsApp" answers that refusal again;
 * a failure that may pass (not linked) leaves no row, so the retry really sends.
 */
@Injectable()
export class SendLedger {
  private readonly logger = new Logger('SendLedger');

  constructor(
    private readonly db: DataSource,
    private readonly events: SessionEvents,
  ) {}

  validate(req: SessionSendRequest): void {
    const errors: Record<string, string> = {};
    if (typeof req?.to !== 'string' || !/^\d{8,15}$/.test(req.to)) errors.to = 'to must be 8 to 15 digits';
    if (typeof req?.text !== 'string' || req.text.trim() === '') errors.text = 'text is required';
    else if (req.text.length > LIMITS.messageMaxLength) errors.text = `text must be ${LIMITS.messageMaxLength} characters or less`;
    if (typeof req?.idempotencyKey !== 'string' || req.idempotencyKey === '' || req.idempotencyKey.length > KEY_MAX) {
      errors.idempotencyKey = `idempotencyKey is required (at most ${KEY_MAX} characters)`;
    }
    if (Object.keys(errors).length > 0) throw AppError.validation(SessionsErrorCode.InvalidRequest, Object.values(errors).join('; '), errors);
  }

  /** `engine` is the user's ready engine, or undefined when the account is not linked. */
  async send(userId: string, req: SessionSendRequest, engine: EngineSession | undefined, kind: SendKind = 'job'): Promise<SessionSendReply> {
    const { to, text, idempotencyKey: key } = req;
    const previous = await this.find(userId, key);
    if (previous?.status === 'sent') return this.reply(previous, true);
    if (previous?.status === 'failed') {
      throw AppError.validation(previous.error_code ?? SessionsErrorCode.SendFailed, previous.error_message ?? SESSION_MESSAGES.notOnWhatsApp, {
        to: previous.error_message ?? SESSION_MESSAGES.notOnWhatsApp,
      });
    }
    if (previous?.status === 'sending' && !previous.stale) throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
    if (!engine) throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);

    if (!(await this.claim(userId, key, kind, to, text, previous !== undefined))) {
      throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
    }
    let sent;
    try {
      sent = await engine.send(to, text, key);
    } catch (err) {
      const error = AppError.fromUnknown(err);
      if (error.kind === ErrorKind.Validation) {
        await this.db.query(
          `UPDATE sends SET status = 'failed', error_code = $3, error_message = $4 WHERE user_id = $1 AND idempotency_key = $2`,
          [userId, key, error.code, error.message],
        );
      } else {
        await this.db.query(`DELETE FROM sends WHERE user_id = $1 AND idempotency_key = $2 AND status = 'sending'`, [userId, key]);
      }
      if (!(err instanceof AppError)) this.logger.error({ err, userId }, 'engine send failed');
      throw err instanceof AppError ? err : AppError.conflict(SessionsErrorCode.SendFailed, (err as Error).message ?? 'send failed');
    }
    await this.db.query(
      `UPDATE sends SET status = 'sent', message_id = $3, sent_at = $4 WHERE user_id = $1 AND idempotency_key = $2`,
      [userId, key, sent.messageId, sent.at],
    );
    return { messageId: sent.messageId, status: 'sent', at: sent.at.toISOString(), duplicate: false };
  }

  /** Delivered/read acks of job sends become `events.message.status`; jobs itself reports sent/failed. */
  async publishAck(userId: string, messageId: string, status: AckStatus, retried = false): Promise<void> {
    if (status !== 'delivered' && status !== 'read') return;
    const rows: { kind: SendKind; idempotency_key: string; text: string }[] = await this.db.query(
      `SELECT kind, idempotency_key, text FROM sends WHERE user_id = $1 AND message_id = $2 AND status = 'sent'`,
      [userId, messageId],
    );
    const row = rows[0];
    if (!row) {
      // A fast ack can overtake the ledger update of its own send.
      if (!retried) setTimeout(() => void this.publishAck(userId, messageId, status, true).catch(() => undefined), 500);
      return;
    }
    if (row.kind !== 'job') return;
    const parsed = parseIdempotencyKey(row.idempotency_key);
    if (!parsed) return;
    await this.events.messageStatus(userId, {
      jobId: parsed.jobId,
      recipient: parsed.recipient,
      messageId,
      idempotencyKey: row.idempotency_key,
      status,
      content: row.text,
    });
  }

  private async find(userId: string, key: string): Promise<LedgerRow | undefined> {
    const rows: LedgerRow[] = await this.db.query(
      `SELECT status, message_id, sent_at, error_code, error_message,
              (status = 'sending' AND created_at < now() - make_interval(secs => $3)) AS stale
         FROM sends WHERE user_id = $1 AND idempotency_key = $2`,
      [userId, key, STALE_CLAIM_SECONDS],
    );
    return rows[0];
  }

  private async claim(userId: string, key: string, kind: SendKind, to: string, text: string, takeOverStale: boolean): Promise<boolean> {
    const rows: unknown[] = takeOverStale
      ? await this.db.query(
          `WITH u AS (UPDATE sends SET created_at = now(), to_number = $3, text = $4
              WHERE user_id = $1 AND idempotency_key = $2 AND status = 'sending'
                AND created_at < now() - make_interval(secs => $5) RETURNING 1)
           SELECT 1 FROM u`,
          [userId, key, to, text, STALE_CLAIM_SECONDS],
        )
      : await this.db.query(
          `INSERT INTO sends (user_id, idempotency_key, kind, status, to_number, text) VALUES ($1, $2, $3, 'sending', $4, $5)
           ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING 1`,
          [userId, key, kind, to, text],
        );
    return rows.length > 0;
  }

  private reply(row: LedgerRow, duplicate: boolean): SessionSendReply {
    return { messageId: row.message_id ?? '', status: 'sent', at: (row.sent_at ?? new Date()).toISOString(), duplicate };
  }
}
