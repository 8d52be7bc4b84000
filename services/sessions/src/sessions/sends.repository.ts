import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows, SERVICE_ENV, StatementBatcher, Transactions } from '@bns/service-kit';
import { firstOfEachKey, ledgerBatching, userKey, type LedgerBatchEnv } from './ledger-batching.js';
import { SendEntity, type SendKind, type SendStatus } from './send.entity.js';

export interface LedgerEntry {
  status: SendStatus;
  messageId: string | null;
  sentAt: Date | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** A `sending` claim older than the stale time, or made before this process started: its process died mid-send. */
  stale: boolean;
}

export interface SentEntry {
  kind: SendKind;
  idempotencyKey: string;
  text: string;
}

interface Claim {
  userId: string;
  key: string;
  kind: SendKind;
  to: string;
  text: string;
}

/**
 * The one rule for a dead claim, as SQL over `sends`: older than the stale time (parameter `secs`), or
 * made before this process started (parameter `startedAt`; see SendsRepository.startedAt).
 */
const staleClaim = (secs: string, startedAt: string) =>
  `(created_at < now() - make_interval(secs => ${secs}) OR created_at < ${startedAt}::timestamptz)`;

interface SentMark {
  userId: string;
  key: string;
  messageId: string;
  at: Date;
}

/**
 * Every query of the send ledger (`sends`), one row per (user, idempotency key). The two statements of
 * every send, the claim and the sent mark, are group-committed: those that arrive while the previous
 * ones are in flight (many accounts sending at once) are written by one multi-row statement.
 */
@Injectable()
export class SendsRepository implements BeforeApplicationShutdown, OnModuleInit {
  private readonly claims: StatementBatcher<Claim, boolean>;
  private readonly sentMarks: StatementBatcher<SentMark, void>;
  /**
   * When this process started, by the database's clock. One process serves a shard's users at a time
   * (a StatefulSet's pod), so a claim still `sending` from before it was made by a process that died
   * mid-send (a kill -9, an OOM): it is stale at once, and a restarted shard's first retry of that key
   * takes it over as it would after the stale time, instead of answering "in progress" for minutes.
   */
  private startedAt: Date | null = null;

  constructor(
    private readonly tx: Transactions,
    @Inject(SERVICE_ENV) env: LedgerBatchEnv,
  ) {
    this.claims = new StatementBatcher(
      { many: (c) => this.claimMany(c), one: (c) => this.claimOne(c) },
      ledgerBatching(env, 'claim'),
    );
    this.sentMarks = new StatementBatcher(
      { many: (m) => this.markSentMany(m), one: (m) => this.markSentOne(m) },
      ledgerBatching(env, 'sent'),
    );
  }

  async onModuleInit(): Promise<void> {
    const [r] = await rows<{ now: Date }>(this.tx.manager, `SELECT now() AS now`);
    this.startedAt = r!.now;
  }

  private repo(em: EntityManager = this.tx.manager) {
    return em.getRepository(SendEntity);
  }

  async find(userId: string, key: string, staleSeconds: number): Promise<LedgerEntry | undefined> {
    const [row] = await rows<LedgerEntry>(
      this.tx.manager,
      `SELECT status, message_id AS "messageId", sent_at AS "sentAt", error_code AS "errorCode", error_message AS "errorMessage",
              (status = 'sending' AND ${staleClaim('$3', '$4')}) AS stale
         FROM sends WHERE user_id = $1 AND idempotency_key = $2`,
      [userId, key, staleSeconds, this.startedAt],
    );
    return row;
  }

  /**
   * A new claim; false when the key already has a row (another send holds or decided it). Committed
   * when it resolves (an autocommit statement, alone or with other sends').
   */
  claim(userId: string, key: string, kind: SendKind, to: string, text: string): Promise<boolean> {
    return this.claims.run({ userId, key, kind, to, text });
  }

  private async claimOne(c: Claim): Promise<boolean> {
    const inserted = await rows(
      this.tx.manager,
      `INSERT INTO sends (user_id, idempotency_key, kind, status, to_number, text) VALUES ($1, $2, $3, 'sending', $4, $5)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [c.userId, c.key, c.kind, c.to, c.text],
    );
    return inserted.length > 0;
  }

  private async claimMany(claims: Claim[]): Promise<boolean[]> {
    // A key twice in one batch: only its first claim is written; the others lose to it (false).
    const first = firstOfEachKey(claims);
    const unique = [...first.values()].map((i) => claims[i]!);
    // Rows in key order, so two batches that share keys never wait on each other in a circle.
    const inserted = await rows<{ userId: string; key: string }>(
      this.tx.manager,
      `INSERT INTO sends (user_id, idempotency_key, kind, status, to_number, text)
       SELECT c.user_id, c.idempotency_key, c.kind, 'sending', c.to_number, c.text
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS c(user_id, idempotency_key, kind, to_number, text)
        ORDER BY c.user_id, c.idempotency_key
       ON CONFLICT DO NOTHING
       RETURNING user_id AS "userId", idempotency_key AS "key"`,
      [
        unique.map((c) => c.userId),
        unique.map((c) => c.key),
        unique.map((c) => c.kind),
        unique.map((c) => c.to),
        unique.map((c) => c.text),
      ],
    );
    const won = new Set(inserted.map((r) => first.get(userKey(r.userId, r.key))));
    return claims.map((_, i) => won.has(i));
  }

  /** Takes over a claim left by a process that died mid-send; false when it is not (or no longer) stale (see `find`). */
  async takeOverStale(userId: string, key: string, to: string, text: string, staleSeconds: number): Promise<boolean> {
    const taken = await rows(
      this.tx.manager,
      `UPDATE sends SET created_at = now(), to_number = $3, text = $4
        WHERE user_id = $1 AND idempotency_key = $2 AND status = 'sending'
          AND ${staleClaim('$5', '$6')}
        RETURNING 1`,
      [userId, key, to, text, staleSeconds, this.startedAt],
    );
    return taken.length > 0;
  }

  /** Sent marks held for company are written now: the service is stopping, its database soon closed. */
  beforeApplicationShutdown(): void {
    this.sentMarks.hurry();
  }

  /**
   * Committed when it resolves (an autocommit statement, alone or with other sends'). `waitMs`: how
   * long the mark may wait for other sends' marks to share its statement and commit.
   */
  markSent(userId: string, key: string, messageId: string, at: Date, waitMs = 0): Promise<void> {
    return this.sentMarks.run({ userId, key, messageId, at }, { waitMs });
  }

  private async markSentOne(m: SentMark): Promise<void> {
    await rows(
      this.tx.manager,
      `UPDATE sends SET status = 'sent', message_id = $3, sent_at = $4 WHERE user_id = $1 AND idempotency_key = $2`,
      [m.userId, m.key, m.messageId, m.at],
    );
  }

  private async markSentMany(marks: SentMark[]): Promise<void[]> {
    await rows(
      this.tx.manager,
      `UPDATE sends s SET status = 'sent', message_id = m.message_id, sent_at = m.sent_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS m(user_id, idempotency_key, message_id, sent_at)
        WHERE s.user_id = m.user_id AND s.idempotency_key = m.idempotency_key`,
      [marks.map((m) => m.userId), marks.map((m) => m.key), marks.map((m) => m.messageId), marks.map((m) => m.at)],
    );
    return marks.map(() => undefined);
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
   * The sent messages a batch of acks is about, in one statement. Ids we did not send, or whose ledger
   * update is not committed yet, are missing from the answer. Each ref is looked up on its own through
   * `sends_user_message_idx` (the subquery is never flattened into a join), so the cost is a few index
   * pages per ack whatever the table's size and whatever plan a connection cached while the table was
   * small: joined, a cached generic plan chosen on a near-empty table scanned the whole table for every
   * batch. Nothing is locked: an ack writes nothing on the ledger (see MessageEvents).
   */
  async sentByMessageIds(
    em: EntityManager,
    refs: { userId: string; messageId: string }[],
  ): Promise<(SentEntry & { userId: string; messageId: string; toNumber: string })[]> {
    if (refs.length === 0) return [];
    return rows(
      em,
      `SELECT s.*
         FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS r(user_id, message_id)) r
        CROSS JOIN LATERAL (
              SELECT x.user_id AS "userId", x.message_id AS "messageId", x.kind, x.idempotency_key AS "idempotencyKey", x.text,
                     x.to_number AS "toNumber"
                FROM sends x
               WHERE x.user_id = r.user_id AND x.message_id = r.message_id AND x.message_id IS NOT NULL AND x.status = 'sent'
               LIMIT 1) s`,
      [refs.map((r) => r.userId), refs.map((r) => r.messageId)],
    );
  }

  /** The number a message of the user's went to, by WhatsApp's id of it (what a quoted reply names). */
  async recipientOfMessage(userId: string, messageId: string): Promise<string | undefined> {
    const [found] = await rows<{ toNumber: string }>(
      this.tx.manager,
      `SELECT to_number AS "toNumber" FROM sends WHERE user_id = $1 AND message_id = $2 LIMIT 1`,
      [userId, messageId],
    );
    return found?.toNumber;
  }
}
