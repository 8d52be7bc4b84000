import { Injectable } from '@nestjs/common';
import {
  DashboardErrorCode,
  DEFAULT_PREFERENCES,
  parseDashboardLimit,
  parsePreferencesUpdate,
  type DashboardData,
  type DashboardSession,
  type MessageStatus,
  type MonthlyUsage,
  type UserPreferences,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { ProjectionRepository } from '../projection/projection.repository.js';
import { PreferencesRepository } from './preferences.repository.js';

const USAGE_MONTHS = 12;

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
  constructor(
    private readonly projection: ProjectionRepository,
    private readonly prefs: PreferencesRepository,
  ) {}

  async get(userId: string, rawLimit: unknown, now = new Date()): Promise<DashboardData> {
    const limit = parseDashboardLimit(rawLimit);
    if (!limit.ok)
      throw AppError.validation(DashboardErrorCode.InvalidLimit, limit.message, { [limit.field]: limit.message });
    const months = lastMonths(now);

    const row = await this.projection.read(userId, limit.value, `${months[0]}-01`, `${months.at(-1)}-01`);
    const { messages, sessions, totals: t, monthly } = row;
    const preferences: UserPreferences =
      row.auto_login_message_enabled === null
        ? { ...DEFAULT_PREFERENCES }
        : { auto_login_message_enabled: row.auto_login_message_enabled };

    const byMonth = new Map(monthly.map((m) => [m.month, m]));
    const usage: MonthlyUsage[] = months.map((month) => ({
      month,
      sent: byMonth.get(month)?.sent ?? 0,
      failed: byMonth.get(month)?.failed ?? 0,
    }));
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
      messages: messages.map(({ seq: _seq, ...m }) => ({
        ...m,
        sent_at: iso(m.sent_at),
        created_at: iso(m.created_at)!,
        replied_at: iso(m.replied_at),
      })),
      sessions: sessionList,
      usage: {
        messages_sent_count: current.sent,
        messages_failed_count: current.failed,
        messages_skipped_count: Number(row.skipped?.month ?? 0),
        monthly: usage,
      },
      stats: {
        totalMessages: n('pending') + n('sent') + n('failed') + n('delivered') + n('read'),
        successfulMessages: n('sent') + n('delivered') + n('read'),
        failedMessages: n('failed'),
        activeSessions: sessionList.filter((s) => s.active).length,
        repliedMessages: t?.replied ?? 0,
        // Not sent on purpose (opted out, not on WhatsApp): neither successful nor failed, and not in the total.
        skippedMessages: Number(row.skipped?.total ?? 0),
      },
      user: { id: userId, preferences },
    };
  }

  async preferences(userId: string): Promise<UserPreferences> {
    const enabled = await this.prefs.autoLoginMessageEnabled(userId);
    return enabled === undefined ? { ...DEFAULT_PREFERENCES } : { auto_login_message_enabled: enabled };
  }

  async setPreferences(userId: string, raw: unknown): Promise<UserPreferences> {
    const update = parsePreferencesUpdate(raw);
    if (!update.ok)
      throw AppError.validation(DashboardErrorCode.InvalidPreferences, update.message, {
        [update.field]: update.message,
      });
    return {
      auto_login_message_enabled: await this.prefs.setAutoLoginMessageEnabled(
        userId,
        update.value.auto_login_message_enabled!,
      ),
    };
  }
}
