import { Injectable } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import type { MessageStatus, MessageStatusEvent, SessionStateEvent } from '@bns/contracts';
import type { ReadModelEvent } from './event-shape.js';
import { applyMessageEvent, type MessageState } from './message-projection.js';

const ACTIVE_STATES = new Set(['ready', 'exist']);
const INACTIVE_STATES = new Set(['disconnected', 'no_session']);
const STATUSES: readonly MessageStatus[] = ['pending', 'sent', 'failed', 'delivered', 'read'];

/** Postgres errors worth a plain retry of the whole batch (another replica held the same rows). */
const RETRYABLE = new Set(['40P01', '40001']);

interface MessageRow {
  user_id: string;
  idempotency_key: string;
  status: MessageStatus;
  outcome: 'sent' | 'failed' | null;
  job_id: string;
  recipient: string;
  content: string;
  error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

type Totals = Record<MessageStatus, number>;

async function rows<T>(q: QueryRunner, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await q.query(sql, params, true)).records as T[];
}

const keyOf = (userId: string, idempotencyKey: string) => `${userId}\u0000${idempotencyKey}`;

/**
 * Applies events to the read model, a batch per transaction. The applied-events insert, the message
 * rows, the per-user totals and the monthly usage all commit together, so an event is either wholly
 * applied (and its id recorded) or not at all, and the caller acks only after the commit.
 */
@Injectable()
export class ProjectionStore {
  constructor(private readonly db: DataSource) {}

  /** Returns how many of the events were new (not applied before). */
  async applyBatch(events: ReadModelEvent[]): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inTransaction((q) => this.apply(q, events));
      } catch (err) {
        if (attempt >= 5 || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      }
    }
  }

  /** Forgets event ids older than the stream can redeliver. */
  async pruneAppliedEvents(olderThanDays: number): Promise<number> {
    const [, count] = (await this.db.query(`DELETE FROM applied_events WHERE applied_at < now() - make_interval(days => $1)`, [olderThanDays])) as [
      unknown,
      number,
    ];
    return count;
  }

  private async inTransaction<T>(work: (q: QueryRunner) => Promise<T>): Promise<T> {
    const q = this.db.createQueryRunner();
    await q.connect();
    try {
      await q.startTransaction();
      const out = await work(q);
      await q.commitTransaction();
      return out;
    } catch (err) {
      if (q.isTransactionActive) await q.rollbackTransaction().catch(() => undefined);
      throw err;
    } finally {
      await q.release();
    }
  }

  private async apply(q: QueryRunner, events: ReadModelEvent[]): Promise<number> {
    const ids = [...new Set(events.map((e) => e.event.eventId))];
    const fresh = new Set(
      (await rows<{ event_id: string }>(q, `INSERT INTO applied_events (event_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING event_id`, [ids])).map(
        (r) => r.event_id,
      ),
    );
    const messages: MessageStatusEvent[] = [];
    const sessions: SessionStateEvent[] = [];
    for (const e of events) {
      // Also drops a second copy inside the same batch.
      if (!fresh.delete(e.event.eventId)) continue;
      if (e.subject === 'events.message.status') messages.push(e.event);
      else sessions.push(e.event);
    }
    if (messages.length > 0) await this.applyMessages(q, messages);
    for (const e of sessions) await this.applySession(q, e);
    return messages.length + sessions.length;
  }

  private async applyMessages(q: QueryRunner, events: MessageStatusEvent[]): Promise<void> {
    const firstByKey = new Map<string, MessageStatusEvent>();
    for (const e of events) if (!firstByKey.has(keyOf(e.userId, e.idempotencyKey))) firstByKey.set(keyOf(e.userId, e.idempotencyKey), e);
    // A fixed order of row locks, so two replicas applying overlapping batches cannot deadlock.
    const firsts = [...firstByKey.values()].sort((a, b) => (keyOf(a.userId, a.idempotencyKey) < keyOf(b.userId, b.idempotencyKey) ? -1 : 1));

    // New messages get a placeholder row first: it takes the row lock, so a replica racing on the same
    // message waits for this commit and then sees the row instead of inserting its own.
    const inserted = new Set(
      (
        await rows<{ user_id: string; idempotency_key: string }>(
          q,
          `INSERT INTO messages (user_id, idempotency_key, job_id, recipient, content, status, created_at)
           SELECT u, k, j, r, c, 'pending', a FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS t(u, k, j, r, c, a)
           ON CONFLICT (user_id, idempotency_key) DO NOTHING
           RETURNING user_id, idempotency_key`,
          [
            firsts.map((e) => e.userId),
            firsts.map((e) => e.idempotencyKey),
            firsts.map((e) => e.jobId),
            firsts.map((e) => e.recipient),
            firsts.map((e) => e.content),
            firsts.map((e) => e.at),
          ],
        )
      ).map((r) => keyOf(r.user_id, r.idempotency_key)),
    );
    const existing = await rows<MessageRow>(
      q,
      `SELECT m.user_id, m.idempotency_key, status, outcome, job_id, recipient, content, error, created_at, sent_at
         FROM messages m JOIN unnest($1::text[], $2::text[]) AS t(u, k) ON m.user_id = t.u AND m.idempotency_key = t.k
        ORDER BY m.user_id COLLATE "C", m.idempotency_key COLLATE "C"
          FOR UPDATE OF m`,
      [firsts.map((e) => e.userId), firsts.map((e) => e.idempotencyKey)],
    );

    const states = new Map<string, MessageState | undefined>();
    for (const r of existing) {
      const key = keyOf(r.user_id, r.idempotency_key);
      states.set(
        key,
        inserted.has(key)
          ? undefined
          : { status: r.status, outcome: r.outcome, jobId: r.job_id, recipient: r.recipient, content: r.content, error: r.error, createdAt: r.created_at, sentAt: r.sent_at },
      );
    }
    const before = new Map(states);
    const monthly = new Map<string, { userId: string; month: string; sent: number; failed: number }>();
    for (const e of events) {
      const key = keyOf(e.userId, e.idempotencyKey);
      const step = applyMessageEvent(states.get(key), e);
      states.set(key, step.next);
      if (step.counted) {
        const mk = `${e.userId}\u0000${step.counted.month}`;
        const m = monthly.get(mk) ?? { userId: e.userId, month: step.counted.month, sent: 0, failed: 0 };
        m[step.counted.outcome] += 1;
        monthly.set(mk, m);
      }
    }

    const totals = new Map<string, Totals>();
    const bump = (userId: string, status: MessageStatus, by: number) => {
      const t = totals.get(userId) ?? { pending: 0, sent: 0, failed: 0, delivered: 0, read: 0 };
      t[status] += by;
      totals.set(userId, t);
    };
    const changed: Array<{ userId: string; key: string; s: MessageState }> = [];
    for (const e of firsts) {
      const key = keyOf(e.userId, e.idempotencyKey);
      const prev = before.get(key);
      const next = states.get(key)!;
      if (prev?.status !== next.status) {
        if (prev) bump(e.userId, prev.status, -1);
        bump(e.userId, next.status, 1);
      }
      changed.push({ userId: e.userId, key: e.idempotencyKey, s: next });
    }

    await q.query(
      `UPDATE messages m
          SET status = t.s, outcome = t.o, job_id = t.j, recipient = t.r, content = t.c, error = t.err,
              created_at = t.ca, sent_at = t.sa, updated_at = now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[])
              AS t(u, k, s, o, j, r, c, err, ca, sa)
        WHERE m.user_id = t.u AND m.idempotency_key = t.k`,
      [
        changed.map((c) => c.userId),
        changed.map((c) => c.key),
        changed.map((c) => c.s.status),
        changed.map((c) => c.s.outcome),
        changed.map((c) => c.s.jobId),
        changed.map((c) => c.s.recipient),
        changed.map((c) => c.s.content),
        changed.map((c) => c.s.error),
        changed.map((c) => c.s.createdAt),
        changed.map((c) => c.s.sentAt),
      ],
    );

    const users = [...totals.keys()].sort();
    if (users.length > 0) {
      await q.query(
        `INSERT INTO user_totals AS t (user_id, ${STATUSES.join(', ')})
         SELECT * FROM unnest($1::text[], ${STATUSES.map((_, i) => `$${i + 2}::bigint[]`).join(', ')})
         ON CONFLICT (user_id) DO UPDATE SET ${STATUSES.map((s) => `${s} = t.${s} + excluded.${s}`).join(', ')}`,
        [users, ...STATUSES.map((s) => users.map((u) => totals.get(u)![s]))],
      );
    }
    const months = [...monthly.values()].sort((a, b) => (a.userId === b.userId ? a.month.localeCompare(b.month) : a.userId < b.userId ? -1 : 1));
    if (months.length > 0) {
      await q.query(
        `INSERT INTO monthly_usage AS mu (user_id, month, sent_count, failed_count)
         SELECT * FROM unnest($1::text[], $2::date[], $3::int[], $4::int[])
         ON CONFLICT (user_id, month) DO UPDATE SET sent_count = mu.sent_count + excluded.sent_count, failed_count = mu.failed_count + excluded.failed_count`,
        [months.map((m) => m.userId), months.map((m) => m.month), months.map((m) => m.sent), months.map((m) => m.failed)],
      );
    }
  }

  /**
   * One WhatsApp link per user: ready/exist make the event's session the active one, disconnected and
   * no_session end it. Other states (qr, creating, ...) say nothing about an existing link.
   */
  private async applySession(q: QueryRunner, e: SessionStateEvent): Promise<void> {
    const active = ACTIVE_STATES.has(e.state);
    if (!active && !INACTIVE_STATES.has(e.state)) return;
    const newer = await rows(
      q,
      `INSERT INTO link_states AS l (user_id, state, at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, at = excluded.at WHERE l.at <= excluded.at
       RETURNING user_id`,
      [e.userId, e.state, e.at],
    );
    if (newer.length === 0) return; // an older state arriving late: the newer one already stands

    const sessionId = e.sessionId ?? e.userId;
    await q.query(
      `UPDATE sessions SET active = false, disconnected_at = $3, updated_at = $3
        WHERE user_id = $1 AND active AND ($2::text IS NULL OR session_id <> $2)`,
      [e.userId, active ? sessionId : null, e.at],
    );
    if (active) {
      await q.query(
        `INSERT INTO sessions AS s (user_id, session_id, phone_number, active, connected_at, updated_at)
         VALUES ($1, $2, $3, true, $4, $4)
         ON CONFLICT (user_id, session_id) DO UPDATE
           SET phone_number = coalesce(excluded.phone_number, s.phone_number), active = true,
               connected_at = CASE WHEN s.active THEN s.connected_at ELSE excluded.connected_at END,
               disconnected_at = NULL, updated_at = excluded.updated_at`,
        [e.userId, sessionId, e.phoneNumber ?? null, e.at],
      );
    }
  }
}
