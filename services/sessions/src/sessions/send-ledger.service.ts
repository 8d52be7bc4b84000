import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import {
  ErrorKind,
  LIMITS,
  SESSION_MESSAGES,
  SessionsErrorCode,
  type SessionSendReply,
  type SessionSendRequest,
  withRetry,
  type BackoffPolicy,
} from '@bns/contracts';
import type { SessionsEnv } from '../config/env.js';
import { safeError } from '../redact.js';
import { TIMED_OUT, within } from '../timeout.js';
import type { EngineSession, OutgoingMedia } from './engines/engine.types.js';
import type { SendKind } from './send.entity.js';
import { SendsRepository, type LedgerEntry } from './sends.repository.js';

/** Waits between tries of a Postgres write: 250 ms, 500 ms, … at most 5 s (within each call's budget). */
const RECORD_RETRY: BackoffPolicy = { baseMs: 250, maxMs: 5000 };

export type { SendKind } from './send.entity.js';

/** A claim older than this (or made before this process started) is from a process that died mid-send; the key may be tried again. */
export const STALE_CLAIM_SECONDS = 120;
const KEY_MAX = 300;
/** How long the outcome of a send that left is retried while Postgres is unreachable (under the stale time). */
const RECORD_SENT_BUDGET_MS = 100_000;

/**
 * The send ledger (`sessions.sends`): one row per idempotency key. A key that was sent answers its
 * first result and sends nothing; a key refused as "not on WhatsApp" answers that refusal again;
 * a failure that may pass (not linked) leaves no row, so the retry really sends. A send the engine may
 * have handed to WhatsApp without confirming it (no message id, or no answer within SEND_TIMEOUT_MS,
 * well under the stale time) is `unknown`: answered as an unconfirmed send, and never sent again.
 */
@Injectable()
export class SendLedger {
  private readonly logger = new Logger('SendLedger');

  constructor(
    private readonly sends: SendsRepository,
    @Inject(SERVICE_ENV) private readonly env: Pick<SessionsEnv, 'SEND_TIMEOUT_MS'>,
  ) {}

  validate(req: SessionSendRequest): void {
    const errors: Record<string, string> = {};
    if (typeof req?.to !== 'string' || !/^\d{8,15}$/.test(req.to)) errors.to = 'to must be 8 to 15 digits';
    if (typeof req?.text !== 'string' || req.text.trim() === '') errors.text = 'text is required';
    else if (req.text.length > LIMITS.messageMaxLength)
      errors.text = `text must be ${LIMITS.messageMaxLength} characters or less`;
    if (typeof req?.idempotencyKey !== 'string' || req.idempotencyKey === '' || req.idempotencyKey.length > KEY_MAX) {
      errors.idempotencyKey = `idempotencyKey is required (at most ${KEY_MAX} characters)`;
    }
    if (Object.keys(errors).length > 0)
      throw AppError.validation(SessionsErrorCode.InvalidRequest, Object.values(errors).join('; '), errors);
  }

  /** `engine` is the user's ready engine, or undefined when the account is not linked. */
  async send(
    userId: string,
    req: SessionSendRequest,
    engine: EngineSession | undefined,
    kind: SendKind = 'job',
    media?: OutgoingMedia,
  ): Promise<SessionSendReply> {
    const { to, text, idempotencyKey: key } = req;
    // The usual case, a new key on a linked account, is one statement: the claim. Only a key that
    // already has a row is looked up, to answer its first result or take over a dead claim.
    let claimed = engine ? await this.sends.claim(userId, key, kind, to, text) : false;
    if (!claimed || !engine) {
      const previous = await this.sends.find(userId, key, STALE_CLAIM_SECONDS);
      if (previous?.status === 'sent' || previous?.status === 'unknown') return this.reply(previous, true);
      if (previous?.status === 'failed') {
        throw AppError.validation(
          previous.errorCode ?? SessionsErrorCode.SendFailed,
          previous.errorMessage ?? SESSION_MESSAGES.notOnWhatsApp,
          {
            to: previous.errorMessage ?? SESSION_MESSAGES.notOnWhatsApp,
          },
        );
      }
      if (previous?.status === 'sending' && !previous.stale)
        throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
      if (!engine) throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
      // No row any more (a released claim): claim it now; a stale claim: take it over.
      claimed = previous
        ? await this.sends.takeOverStale(userId, key, to, text, STALE_CLAIM_SECONDS)
        : await this.sends.claim(userId, key, kind, to, text);
      if (!claimed) throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
    }
    let sent;
    try {
      sent = await within(engine.send(to, text, key, media), this.env.SEND_TIMEOUT_MS);
    } catch (err) {
      // The engine answers an error only when the message surely did not go out.
      const error = AppError.fromUnknown(err);
      // Recorded across a Postgres blip too (the engine's own failure may be that blip): a claim left
      // `sending` would answer "in progress" to every retry until it went stale, minutes later.
      const record =
        error.kind === ErrorKind.Validation
          ? () => this.sends.markFailed(userId, key, error.code, error.message)
          : () => this.sends.release(userId, key);
      await withRetry(record, { ...RECORD_RETRY, budgetMs: RECORD_SENT_BUDGET_MS });
      if (!(err instanceof AppError)) this.logger.error({ err: safeError(err), userId }, 'engine send failed');
      throw err instanceof AppError
        ? err
        : AppError.conflict(SessionsErrorCode.SendFailed, SESSION_MESSAGES.sendFailed);
    }
    if (sent === TIMED_OUT || !sent.messageId) {
      const at = sent === TIMED_OUT ? new Date() : sent.at;
      await withRetry(() => this.sends.markUnknown(userId, key, at), {
        ...RECORD_RETRY,
        budgetMs: RECORD_SENT_BUDGET_MS,
      });
      this.logger.warn(
        { userId, timedOut: sent === TIMED_OUT },
        'WhatsApp did not confirm a send; recorded as unconfirmed and never sent again',
      );
      return { messageId: '', status: 'sent', at: at.toISOString(), duplicate: false, unconfirmed: true };
    }
    // The message went out: its ledger row must say so, even across a Postgres blip, or a retry after
    // the stale time would send it again. The reply waits for that record; a caller whose next send
    // is far away lets it wait for other sends' records (recordWaitMs), one commit for several.
    const messageId = sent.messageId;
    const waitMs = req.recordWaitMs ?? 0;
    await withRetry(() => this.sends.markSent(userId, key, messageId, sent.at, waitMs), {
      ...RECORD_RETRY,
      budgetMs: RECORD_SENT_BUDGET_MS,
    });
    return { messageId, status: 'sent', at: sent.at.toISOString(), duplicate: false };
  }

  private reply(row: LedgerEntry, duplicate: boolean): SessionSendReply {
    const at = (row.sentAt ?? new Date()).toISOString();
    return row.status === 'unknown'
      ? { messageId: '', status: 'sent', at, duplicate, unconfirmed: true }
      : { messageId: row.messageId ?? '', status: 'sent', at, duplicate };
  }
}
