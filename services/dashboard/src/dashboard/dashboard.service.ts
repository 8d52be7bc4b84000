import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  DashboardErrorCode,
  DEFAULT_PREFERENCES,
  parseDashboardLimit,
  parsePreferencesUpdate,
  type DashboardData,
  type DashboardMessage,
  type DashboardSession,
  type MessageStatus,
  type MonthlyUsage,
  type UserPreferences,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';

const USAGE_MONTHS = 12;

/** The one row of the dashboard query; json columns arrive parsed, their times as ISO text. */
interface ReadRow {
  messages: Array<Omit<DashboardMessage, 'id'> & { id: number }>;
  sessions: Array<{ session_id: string; phone_number: string | null; active: boolean; connected_at: string | null; updated_at: string }>;
  totals: Record<MessageStatus, number> | null;
  monthly: MonthlyUsage[];
  auto_login_message_enabled: boolean | null;
}

/** The last `count` UTC months, oldest first, as `YYYY-MM` (the current month last). */
export function lastMonths(now: Date, count = USAGE_MONTHS): string[] {
  const out: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    out.push(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7));
  }
  return out;
}

/** Postgres writes json times as `2025-05-02T10:00:00.123456+00:00`; the API answers `...00.123Z`. */
const iso = (t: string | null): string | null => (t === null ? null : new Date(t).toISOString());

/** Reads of the read model; every query is bounded by the user's id and served by an index. */
@Injectable()
export class DashboardService {
  constructor(private readonly db: DataSource) {}

  async get(userId: string, rawLimit: unknown, now = new Date()): Promise<DashboardData> {
    const limit = parseDashboardLimit(rawLimit);
    if (!limit.ok) throw AppError.validation(DashboardErrorCode.InvalidLimit, limit.message, { [limit.field]: limit.message });
    const months = lastMonths(now);

    // One statement, one round trip: each part is an index lookup on the user's id.
    const [row] = (await this.db.query(
      `SELECT
         (SELECT coalesce(json_agg(r ORDER BY r.created_at DESC, r.id DESC), '[]')
            FROM (SELECT m.id, m.job_id, m.recipient, m.content, m.status, m.error, m.sent_at, m.created_at
                    FROM messages m WHERE m.user_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT $2) r) AS messages,
         (SELECT coalesce(json_agg(s ORDER BY s.active DESC, s.updated_at DESC), '[]')
            FROM (SELECT session_id, phone_number, active, connected_at, updated_at
                    FROM sessions WHERE user_id = $1 ORDER BY active DESC, updated_at DESC LIMIT 10) s) AS sessions,
         (SELECT row_to_json(t) FROM (SELECT pending, sent, failed, delivered, read FROM user_totals WHERE user_id = $1) t) AS totals,
         (SELECT coalesce(json_agg(json_build_object('month', to_char(month, 'YYYY-MM'), 'sent', sent_count, 'failed', failed_count)), '[]')
            FROM monthly_usage WHERE user_id = $1 AND month >= $3::date) AS monthly,
         (SELECT auto_login_message_enabled FROM user_preferences WHERE user_id = $1) AS auto_login_message_enabled`,
      [userId, limit.value, `${months[0]}-01`],
    )) as [ReadRow];
    const { messages, sessions, totals: t, monthly } = row;
    const preferences: UserPreferences =
      row.auto_login_message_enabled === null ? { ...DEFAULT_PREFERENCES } : { auto_login_message_enabled: row.auto_login_message_enabled };

    const byMonth = new Map(monthly.map((m) => [m.month, m]));
    const usage: MonthlyUsage[] = months.map((month) => ({ month, sent: byMonth.get(month)?.sent ?? 0, failed: byMonth.get(month)?.failed ?? 0 }));
    const current = usage[usage.length - 1]!;
    const n = (status: MessageStatus) => t?.[status] ?? 0;
    const sessionList: DashboardSession[] = sessions.map((s) => ({
      id: s.session_id,
      phoneNumber: s.phone_number,
      active: s.active,
      connected_at: iso(s.connected_at),
      updated_at: iso(s.updated_at)!,
    }));

    return {
      messages: messages.map((m) => ({ ...m, id: String(m.id), sent_at: iso(m.sent_at), created_at: iso(m.created_at)! })),
      sessions: sessionList,
      usage: { messages_sent_count: current.sent, messages_failed_count: current.failed, monthly: usage },
      stats: {
        totalMessages: n('pending') + n('sent') + n('failed') + n('delivered') + n('read'),
        successfulMessages: n('sent') + n('delivered') + n('read'),
        failedMessages: n('failed'),
        activeSessions: sessionList.filter((s) => s.active).length,
      },
      user: { id: userId, preferences },
    };
  }

  async preferences(userId: string): Promise<UserPreferences> {
    const [row] = (await this.db.query(`SELECT auto_login_message_enabled FROM user_preferences WHERE user_id = $1`, [userId])) as UserPreferences[];
    return row ? { auto_login_message_enabled: row.auto_login_message_enabled } : { ...DEFAULT_PREFERENCES };
  }

  async setPreferences(userId: string, raw: unknown): Promise<UserPreferences> {
    const update = parsePreferencesUpdate(raw);
    if (!update.ok) throw AppError.validation(DashboardErrorCode.InvalidPreferences, update.message, { [update.field]: update.message });
    const [row] = (await this.db.query(
      `INSERT INTO user_preferences (user_id, auto_login_message_enabled) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET auto_login_message_enabled = excluded.auto_login_message_enabled, updated_at = now()
       RETURNING auto_login_message_enabled`,
      [userId, update.value.auto_login_message_enabled],
    )) as UserPreferences[];
    return { auto_login_message_enabled: row!.auto_login_message_enabled };
  }
}
