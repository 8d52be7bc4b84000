import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { LIMITS, type DashboardMessage, type MessageStatus, type MonthlyUsage } from '@bns/contracts';
import { rows } from '@bns/service-kit';
import { AppliedEventEntity } from './entities/applied-event.entity.js';
import type { MessageState } from './message-projection.js';

export const MESSAGE_STATUSES: readonly MessageStatus[] = ['pending', 'sent', 'failed', 'delivered', 'read'];

export type Totals = Record<MessageStatus, number>;

/** A message is named by its user and idempotency key. */
export interface MessageKey {
  userId: string;
  idempotencyKey: string;
}

/** What the first event of a message brings to its placeholder row. */
export interface NewMessage extends MessageKey {
  jobId: string;
  recipient: string;
  content: string;
  at: string;
}

export interface StoredMessage extends MessageKey {
  state: MessageState;
}

export interface MonthlyCount {
  userId: string;
  /** `YYYY-MM-01` */
  month: string;
  sent: number;
  failed: number;
}

/** The one row of the dashboard read: json columns arrive parsed, their times as ISO text. */
export interface DashboardReadRow {
  messages: Array<DashboardMessage & { seq: number }>;
  sessions: Array<{
    session_id: string;
    phone_number: string | null;
    active: boolean;
    connected_at: string | null;
    updated_at: string;
  }>;
  totals: (Totals & { replied: number }) | null;
  monthly: MonthlyUsage[];
  /** Recipients the user's jobs skipped: all told, and in the current month. */
  skipped: { total: number; month: number };
  auto_login_message_enabled: boolean | null;
}

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

/** A job's count of skipped recipients as one progress event said it; `month` is `YYYY-MM-01` of the event. */
export interface JobSkips {
  userId: string;
  jobId: string;
  month: string;
  skipped: number;
}

/** A received message, its sender already in the form messages name recipients. */
export interface InboundRecord {
  userId: string;
  messageId: string;
  from: string;
  text: string;
  at: string;
}

/** What became of a received message. */
export type InboundOutcome =
  /** The same WhatsApp message was stored before (republished under another event id). */
  | 'duplicate'
  /** Stored; no message sent to this number before it is known (yet). */
  | 'unmatched'
  /** Stored as an answer to a message that already had one. */
  | 'answered-again'
  /** Stored as the first answer to a message: it is now replied. */
  | 'first-answer';

/** The start of an answer kept on the message, cut in SQL so it counts characters as varchar does. */
const PREVIEW = `left(%s, ${LIMITS.replyPreviewMax})`;

/**
 * The message a received message answers: the most recent one sent (not failed) to its sender at or
 * before it arrived. WhatsApp's times have whole seconds, so the send time is compared cut to seconds.
 */
const SENT_BEFORE = (m: string, at: string) =>
  `${m}.sent_at IS NOT NULL AND ${m}.status <> 'failed' AND date_trunc('second', ${m}.sent_at) <= ${at}`;

interface KeyRow {
  user_id: string;
  idempotency_key: string;
}

/** The part of pg's Pool the prepared read uses (the service does not depend on pg's types). */
interface PgPool {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/**
 * A message's id as the API shows it: opaque and stable, made from the user and the message's own key.
 * The row's number is one sequence for every tenant, so showing it would tell anyone how many messages
 * the whole service has stored, and how fast; it only orders the rows here (`seq`).
 */
const PUBLIC_MESSAGE_ID_SQL = `left(encode(sha256(convert_to(m.user_id || '/' || m.idempotency_key, 'UTF8')), 'hex'), 32)`;

/**
 * The dashboard's read: $1 user id, $2 how many recent messages, $3 first month of the usage, $4 the
 * current month (both `YYYY-MM-DD`).
 */
const DASHBOARD_READ_SQL = `SELECT
   (SELECT coalesce(json_agg(r ORDER BY r.created_at DESC, r.seq DESC), '[]')
      FROM (SELECT m.id AS seq, ${PUBLIC_MESSAGE_ID_SQL} AS id, m.job_id, m.recipient, m.content, m.status, m.error, m.sent_at, m.created_at, m.replied_at, m.reply
              FROM messages m WHERE m.user_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT $2) r) AS messages,
   (SELECT coalesce(json_agg(s ORDER BY s.active DESC, s.updated_at DESC), '[]')
      FROM (SELECT session_id, phone_number, active, connected_at, updated_at
              FROM sessions WHERE user_id = $1 ORDER BY active DESC, updated_at DESC LIMIT 10) s) AS sessions,
   (SELECT row_to_json(t) FROM (SELECT ${MESSAGE_STATUSES.join(', ')}, replied FROM user_totals WHERE user_id = $1) t) AS totals,
   (SELECT coalesce(json_agg(json_build_object('month', to_char(month, 'YYYY-MM'), 'sent', sent_count, 'failed', failed_count)), '[]')
      FROM monthly_usage WHERE user_id = $1 AND month >= $3::date) AS monthly,
   (SELECT json_build_object('total', coalesce(sum(skipped), 0), 'month', coalesce(sum(skipped) FILTER (WHERE month = $4::date), 0))
      FROM job_skips WHERE user_id = $1) AS skipped,
   (SELECT auto_login_message_enabled FROM user_preferences WHERE user_id = $1) AS auto_login_message_enabled`;

/**
 * Every query of the read model (messages, totals, monthly usage, link states, sessions, applied event
 * ids). Writes take the caller's transaction (`em`) so one batch of events commits as a whole; they are
 * set-based (`unnest` of arrays) because a batch holds up to DASHBOARD_BATCH_MAX events.
 */
@Injectable()
export class ProjectionRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * One statement, one round trip: each part is an index lookup on the user's id. It is the hottest
   * read of the service, so it runs as a named prepared statement: each pooled connection parses and
   * plans it once, not on every call (measured at 1,000,000 messages: 15–30 % less Postgres CPU per
   * read). Its result columns are json and boolean only, so a migration that adds a column to a table
   * it reads does not break the statement cached on a live connection.
   */
  async read(userId: string, limit: number, fromMonth: string, currentMonth: string): Promise<DashboardReadRow> {
    const {
      rows: [row],
    } = await this.pool().query<DashboardReadRow>({
      name: 'dashboard-read-2',
      text: DASHBOARD_READ_SQL,
      values: [userId, limit, fromMonth, currentMonth],
    });
    return row!;
  }

  /** The data source's pg pool: TypeORM's `query` cannot name a statement, pg's can. */
  private pool(): PgPool {
    return (this.db.driver as unknown as { master: PgPool }).master;
  }

  /** Records the ids; answers those that were not recorded before (the events to apply). */
  async markApplied(em: EntityManager, eventIds: string[]): Promise<Set<string>> {
    const fresh = await rows<{ event_id: string }>(
      em,
      `INSERT INTO applied_events (event_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING event_id`,
      [eventIds],
    );
    return new Set(fresh.map((r) => r.event_id));
  }

  /** Forgets event ids older than the stream can redeliver; answers how many. */
  async pruneAppliedEvents(olderThanDays: number): Promise<number> {
    const result = await this.db
      .createQueryBuilder()
      .delete()
      .from(AppliedEventEntity)
      .where('applied_at < now() - make_interval(days => :days)', { days: olderThanDays })
      .execute();
    return result.affected ?? 0;
  }

  /**
   * Inserts a pending placeholder for each message not stored yet; answers the keys it inserted. The
   * insert takes the row lock, so a replica racing on the same message waits for this commit and then
   * sees the row instead of inserting its own. `messages` must be sorted by key (lock order).
   */
  async insertPlaceholders(em: EntityManager, messages: NewMessage[]): Promise<MessageKey[]> {
    const inserted = await rows<KeyRow>(
      em,
      `INSERT INTO messages (user_id, idempotency_key, job_id, recipient, content, status, created_at)
       SELECT u, k, j, r, c, 'pending', a FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS t(u, k, j, r, c, a)
       ON CONFLICT (user_id, idempotency_key) DO NOTHING
       RETURNING user_id, idempotency_key`,
      [
        messages.map((m) => m.userId),
        messages.map((m) => m.idempotencyKey),
        messages.map((m) => m.jobId),
        messages.map((m) => m.recipient),
        messages.map((m) => m.content),
        messages.map((m) => m.at),
      ],
    );
    return inserted.map((r) => ({ userId: r.user_id, idempotencyKey: r.idempotency_key }));
  }

  /** Reads and row-locks the messages, in a fixed order so two replicas cannot deadlock. */
  async lockMessages(em: EntityManager, keys: MessageKey[]): Promise<StoredMessage[]> {
    const found = await rows<MessageRow>(
      em,
      `SELECT m.user_id, m.idempotency_key, status, outcome, job_id, recipient, content, error, created_at, sent_at
         FROM messages m JOIN unnest($1::text[], $2::text[]) AS t(u, k) ON m.user_id = t.u AND m.idempotency_key = t.k
        ORDER BY m.user_id COLLATE "C", m.idempotency_key COLLATE "C"
          FOR UPDATE OF m`,
      [keys.map((k) => k.userId), keys.map((k) => k.idempotencyKey)],
    );
    return found.map((r) => ({
      userId: r.user_id,
      idempotencyKey: r.idempotency_key,
      state: {
        status: r.status,
        outcome: r.outcome,
        jobId: r.job_id,
        recipient: r.recipient,
        content: r.content,
        error: r.error,
        createdAt: r.created_at,
        sentAt: r.sent_at,
      },
    }));
  }

  async saveMessages(em: EntityManager, messages: StoredMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const s = messages.map((m) => m.state);
    await rows(
      em,
      `UPDATE messages m
          SET status = t.s, outcome = t.o, job_id = t.j, recipient = t.r, content = t.c, error = t.err,
              created_at = t.ca, sent_at = t.sa, updated_at = now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[])
              AS t(u, k, s, o, j, r, c, err, ca, sa)
        WHERE m.user_id = t.u AND m.idempotency_key = t.k`,
      [
        messages.map((m) => m.userId),
        messages.map((m) => m.idempotencyKey),
        s.map((x) => x.status),
        s.map((x) => x.outcome),
        s.map((x) => x.jobId),
        s.map((x) => x.recipient),
        s.map((x) => x.content),
        s.map((x) => x.error),
        s.map((x) => x.createdAt),
        s.map((x) => x.sentAt),
      ],
    );
  }

  /** Adds the (signed) differences to each user's totals. */
  async addTotals(em: EntityManager, totals: Map<string, Totals>): Promise<void> {
    const users = [...totals.keys()].sort();
    if (users.length === 0) return;
    await rows(
      em,
      `INSERT INTO user_totals AS t (user_id, ${MESSAGE_STATUSES.join(', ')})
       SELECT * FROM unnest($1::text[], ${MESSAGE_STATUSES.map((_, i) => `$${i + 2}::bigint[]`).join(', ')})
       ON CONFLICT (user_id) DO UPDATE SET ${MESSAGE_STATUSES.map((s) => `${s} = t.${s} + excluded.${s}`).join(', ')}`,
      [users, ...MESSAGE_STATUSES.map((s) => users.map((u) => totals.get(u)![s]))],
    );
  }

  async addMonthlyUsage(em: EntityManager, counts: MonthlyCount[]): Promise<void> {
    if (counts.length === 0) return;
    const sorted = [...counts].sort((a, b) =>
      a.userId === b.userId ? a.month.localeCompare(b.month) : a.userId < b.userId ? -1 : 1,
    );
    await rows(
      em,
      `INSERT INTO monthly_usage AS mu (user_id, month, sent_count, failed_count)
       SELECT * FROM unnest($1::text[], $2::date[], $3::int[], $4::int[])
       ON CONFLICT (user_id, month) DO UPDATE SET sent_count = mu.sent_count + excluded.sent_count, failed_count = mu.failed_count + excluded.failed_count`,
      [sorted.map((m) => m.userId), sorted.map((m) => m.month), sorted.map((m) => m.sent), sorted.map((m) => m.failed)],
    );
  }

  /** Stores the link state unless a newer one stands; answers whether it was stored. */
  async recordLinkState(em: EntityManager, userId: string, state: string, at: string): Promise<boolean> {
    const newer = await rows<{ user_id: string }>(
      em,
      `INSERT INTO link_states AS l (user_id, state, at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, at = excluded.at WHERE l.at <= excluded.at
       RETURNING user_id`,
      [userId, state, at],
    );
    return newer.length > 0;
  }

  /** Ends every active session of the user but `keep` (all of them when null). */
  async endSessions(em: EntityManager, userId: string, keep: string | null, at: string): Promise<void> {
    await rows(
      em,
      `UPDATE sessions SET active = false, disconnected_at = $3, updated_at = $3
        WHERE user_id = $1 AND active AND ($2::text IS NULL OR session_id <> $2)`,
      [userId, keep, at],
    );
  }

  /** Makes the session active; a session that already was keeps its connected time. */
  async activateSession(
    em: EntityManager,
    userId: string,
    sessionId: string,
    phoneNumber: string | null,
    at: string,
  ): Promise<void> {
    await rows(
      em,
      `INSERT INTO sessions AS s (user_id, session_id, phone_number, active, connected_at, updated_at)
       VALUES ($1, $2, $3, true, $4, $4)
       ON CONFLICT (user_id, session_id) DO UPDATE
         SET phone_number = coalesce(excluded.phone_number, s.phone_number), active = true,
             connected_at = CASE WHEN s.active THEN s.connected_at ELSE excluded.connected_at END,
             disconnected_at = NULL, updated_at = excluded.updated_at`,
      [userId, sessionId, phoneNumber, at],
    );
  }

  /**
   * Serialises the work on each conversation (user and number): a send and an answer applied at the
   * same moment by two consumers would otherwise each miss the other. Taken first in a transaction, in
   * one order, so two transactions never wait on each other in a cycle.
   */
  async lockConversations(em: EntityManager, conversations: Array<{ userId: string; number: string }>): Promise<void> {
    if (conversations.length === 0) return;
    await rows(
      em,
      `SELECT pg_advisory_xact_lock(k) FROM (
         SELECT DISTINCT hashtextextended(t.u || ' ' || t.n, 0) AS k FROM unnest($1::text[], $2::text[]) AS t(u, n) ORDER BY k
       ) keys`,
      [conversations.map((c) => c.userId), conversations.map((c) => c.number)],
    );
  }

  /** Stores a received message and, when it answers one of ours, marks that message replied (first answer only). */
  async recordInbound(em: EntityManager, r: InboundRecord): Promise<InboundOutcome> {
    const stored = await rows(
      em,
      `INSERT INTO inbound_messages (user_id, message_id, from_number, text, received_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, message_id) DO NOTHING RETURNING message_id`,
      [r.userId, r.messageId, r.from, r.text, r.at],
    );
    if (stored.length === 0) return 'duplicate';
    const [answered] = await rows<{ id: string; replied: boolean }>(
      em,
      `SELECT m.id, m.replied_at IS NOT NULL AS replied FROM messages m
        WHERE m.user_id = $1 AND m.recipient = $2 AND ${SENT_BEFORE('m', '$3::timestamptz')}
        ORDER BY m.sent_at DESC, m.id DESC LIMIT 1
          FOR UPDATE`,
      [r.userId, r.from, r.at],
    );
    if (!answered) return 'unmatched';
    await rows(em, `UPDATE inbound_messages SET reply_to = $3 WHERE user_id = $1 AND message_id = $2`, [
      r.userId,
      r.messageId,
      answered.id,
    ]);
    if (answered.replied) return 'answered-again';
    await rows(
      em,
      `UPDATE messages SET replied_at = $2, reply = ${PREVIEW.replace('%s', '$3::text')}, updated_at = now() WHERE id = $1`,
      [answered.id, r.at, r.text],
    );
    return 'first-answer';
  }

  /**
   * Answers that were applied before the send they answer: links them to these messages now (each
   * answer to the most recent message sent before it) and marks each such message replied with its
   * first answer. Answers the user of each message that became replied.
   */
  async matchWaitingAnswers(em: EntityManager, keys: MessageKey[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const replied = await rows<{ user_id: string }>(
      em,
      `WITH sent AS (
         SELECT m.id, m.user_id, m.recipient, m.sent_at FROM messages m
           JOIN unnest($1::text[], $2::text[]) AS t(u, k) ON m.user_id = t.u AND m.idempotency_key = t.k
          WHERE m.replied_at IS NULL AND m.sent_at IS NOT NULL AND m.status <> 'failed'
       ), answers AS (
         SELECT s.id AS answered, i.user_id, i.message_id, i.received_at, i.text
           FROM sent s JOIN inbound_messages i
             ON i.user_id = s.user_id AND i.from_number = s.recipient AND i.reply_to IS NULL AND i.received_at >= date_trunc('second', s.sent_at)
          WHERE NOT EXISTS (SELECT 1 FROM messages later
                             WHERE later.user_id = s.user_id AND later.recipient = s.recipient AND later.sent_at > s.sent_at
                               AND ${SENT_BEFORE('later', 'i.received_at')})
       ), linked AS (
         UPDATE inbound_messages i SET reply_to = a.answered FROM answers a WHERE i.user_id = a.user_id AND i.message_id = a.message_id
       ), first AS (
         SELECT DISTINCT ON (answered) answered, received_at, text FROM answers ORDER BY answered, received_at, message_id
       )
       UPDATE messages m SET replied_at = f.received_at, reply = ${PREVIEW.replace('%s', 'f.text')}, updated_at = now()
         FROM first f WHERE m.id = f.answered
       RETURNING m.user_id`,
      [keys.map((k) => k.userId), keys.map((k) => k.idempotencyKey)],
    );
    return replied.map((r) => r.user_id);
  }

  /** Adds to each user's count of replied messages. */
  async addReplied(em: EntityManager, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await rows(
      em,
      `INSERT INTO user_totals AS t (user_id, replied) SELECT u, count(*) FROM unnest($1::text[]) AS u GROUP BY u ORDER BY u
       ON CONFLICT (user_id) DO UPDATE SET replied = t.replied + excluded.replied`,
      [userIds],
    );
  }

  /**
   * Jobs' counts of skipped recipients, as their progress events say them: a count only grows, so a
   * late or repeated event writes nothing. A job's month is the one of its first event with skips.
   */
  async recordSkips(em: EntityManager, skips: readonly JobSkips[]): Promise<void> {
    if (skips.length === 0) return;
    // One row per job (the largest count), in one order, so two replicas cannot deadlock.
    const byJob = new Map<string, JobSkips>();
    for (const s of skips) {
      const key = `${s.userId}\u0000${s.jobId}`;
      const had = byJob.get(key);
      if (!had || s.skipped > had.skipped)
        byJob.set(key, { ...s, month: had && had.month < s.month ? had.month : s.month });
    }
    const sorted = [...byJob.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s);
    await rows(
      em,
      `INSERT INTO job_skips AS j (user_id, job_id, month, skipped)
       SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::int[])
       ON CONFLICT (user_id, job_id) DO UPDATE SET skipped = excluded.skipped WHERE excluded.skipped > j.skipped`,
      [
        sorted.map((s) => s.userId),
        sorted.map((s) => s.jobId),
        sorted.map((s) => s.month),
        sorted.map((s) => s.skipped),
      ],
    );
  }

  /** Deletes everything the read model holds about the user's messages and links, received texts included. */
  async forgetUser(em: EntityManager, userId: string): Promise<void> {
    for (const table of [
      'inbound_messages',
      'messages',
      'user_totals',
      'monthly_usage',
      'link_states',
      'sessions',
      'job_skips',
    ]) {
      await rows(em, `DELETE FROM ${table} WHERE user_id = $1`, [userId]);
    }
  }
}
