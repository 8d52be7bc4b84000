import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows, Transactions } from '@bns/service-kit';
import { SendEntity, type Receipt, type SendKind, type SendStatus } from './send.entity.js';

export interface LedgerEntry {
  status: SendStatus;
  messageId: string | null;
  sentAt: Date | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** A `sending` claim older than the stale time: its process died mid-send. */
  stale: boolean;
}

export interface SentEntry {
  kind: SendKind;
  idempotencyKey: string;
  text: string;
}

/** Every query of the send ledger (`sends`), one row per (user, idempotency key). */
@Injectable()
export class SendsRepository {
  constructor(private readonly tx: Transactions) {}

  private repo(em: EntityManager = this.tx.manager) {
    return em.getRepository(SendEntity);
  }

  async find(userId: string, key: string, staleSeconds: number): Promise<LedgerEntry | undefined> {
    const [row] = await rows<LedgerEntry>(
      this.tx.manager,
      `SELECT status, message_id AS "messageId", sent_at AS "sentAt", error_code AS "errorCode", error_message AS "errorMessage",
              (status = 'sending' AND created_at < now() - make_interval(secs => $3)) AS stale
         FROM sends WHERE user_id = $1 AND idempotency_key = $2`,
      [userId, key, staleSeconds],
    );
    return row;
  }

  /** A new claim; false when the key already has a row (another send holds or decided it). */
  async claim(userId: string, key: string, kind: SendKind, to: string, text: string): Promise<boolean> {
    // Raw (a prepared statement, like markSent): one of the two ledger statements of every send.
    const inserted = await rows(
      this.tx.manager,
      `INSERT INTO sends (user_id, idempotency_key, kind, status, to_number, text) VALUES ($1, $2, $3, 'sending', $4, $5)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [userId, key, kind, to, text],
    );
    return inserted.length > 0;
  }

  /** Takes over a claim left by a process that died mid-send; false when it is not (or no longer) stale. */
  async takeOverStale(userId: string, key: string, to: string, text: string, staleSeconds: number): Promise<boolean> {
    const taken = await rows(
      this.tx.manager,
      `UPDATE sends SET created_at = now(), to_number = $3, text = $4
        WHERE user_id = $1 AND idempotency_key = $2 AND status = 'sending'
          AND created_at < now() - make_interval(secs => $5)
        RETURNING 1`,
      [userId, key, to, text, staleSeconds],
    );
    return taken.length > 0;
  }

  async markSent(userId: string, key: string, messageId: string, at: Date): Promise<void> {
    await rows(this.tx.manager, `UPDATE sends SET status = 'sent', message_id = $3, sent_at = $4 WHERE user_id = $1 AND idempotency_key = $2`, [userId, key, messageId, at]);
  }

  /** The engine may have sent it: the key keeps its row for good and is never sent again. */
  async markUnknown(userId: string, key: string, at: Date): Promise<void> {
    await this.repo().update({ userId, idempotencyKey: key }, { status: 'unknown', sentAt: at });
  }

  async markFailed(userId: string, key: string, errorCode: string, errorMessage: string): Promise<void> {
    await this.repo().update({ userId, idempotencyKey: key }, { status: 'failed', errorCode, errorMessage });
  }

  /** Drops a claim whose send surely did not reach WhatsApp, so a retry really sends. */
  async release(userId: string, key: string): Promise<void> {
    await this.repo().delete({ userId, idempotencyKey: key, status: 'sending' });
  }

  /**
   * The sent messages a batch of acks is about, locked for `em`'s transaction, in one statement (rows
   * are locked in key order, so two batches never wait on each other in a circle). Ids we did not
   * send, or whose ledger update is not committed yet, are missing from the answer.
   */
  async lockSentByMessageIds(
    em: EntityManager,
    refs: { userId: string; messageId: string }[],
  ): Promise<(SentEntry & { userId: string; messageId: string; receipt: Receipt | null })[]> {
    if (refs.length === 0) return [];
    return rows(
      em,
      `SELECT s.user_id AS "userId", s.message_id AS "messageId", s.kind, s.idempotency_key AS "idempotencyKey", s.text, s.receipt
         FROM sends s
         JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS r(user_id, message_id)) r
           ON s.user_id = r.user_id AND s.message_id = r.message_id
        WHERE s.status = 'sent'
        ORDER BY s.user_id, s.idempotency_key
        FOR UPDATE OF s`,
      [refs.map((r) => r.userId), refs.map((r) => r.messageId)],
    );
  }

  /** Sets many receipts in one statement. */
  async setReceipts(em: EntityManager, updates: { userId: string; idempotencyKey: string; receipt: Receipt }[]): Promise<void> {
    if (updates.length === 0) return;
    await em.query(
      `UPDATE sends s SET receipt = u.receipt, receipt_at = now()
         FROM unnest($1::text[], $2::text[], $3::text[]) AS u(user_id, idempotency_key, receipt)
        WHERE s.user_id = u.user_id AND s.idempotency_key = u.idempotency_key`,
      [updates.map((u) => u.userId), updates.map((u) => u.idempotencyKey), updates.map((u) => u.receipt)],
    );
  }
}
