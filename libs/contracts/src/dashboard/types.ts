import type { MessageStatus } from '../common/events.js';

export interface UserPreferences {
  /** SPEC §3: default true. */
  auto_login_message_enabled: boolean;
}

/** One message of the read model, as the dashboard lists it (full content; the web cuts it at 100). */
export interface DashboardMessage {
  id: string;
  job_id: string;
  recipient: string;
  content: string;
  status: MessageStatus;
  /** Why the send failed; null unless status is failed. */
  error: string | null;
  /** When the message was sent (or failed); null while pending. ISO time. */
  sent_at: string | null;
  /** When the dashboard first heard of the message (its earliest event). ISO time. */
  created_at: string;
}

/** A WhatsApp link of the user as the dashboard last saw it (SPEC §3 Session: id, phoneNumber). */
export interface DashboardSession {
  id: string;
  phoneNumber: string | null;
  active: boolean;
  connected_at: string | null;
  updated_at: string;
}

export interface MonthlyUsage {
  /** Calendar month in UTC, `YYYY-MM`. */
  month: string;
  sent: number;
  failed: number;
}

/**
 * Usage: the current (UTC) month's counts, plus the last 12 months oldest first, months without
 * messages included as zeros. A message counts once, in the month it first reached sent or failed.
 */
export interface DashboardUsage {
  messages_sent_count: number;
  messages_failed_count: number;
  monthly: MonthlyUsage[];
}

/**
 * All-time figures of the read model (every message the dashboard has seen, since the user's first
 * event). successfulMessages = sent + delivered + read; totalMessages also counts pending ones.
 */
export interface DashboardStats {
  totalMessages: number;
  successfulMessages: number;
  failedMessages: number;
  activeSessions: number;
}

export interface DashboardData {
  messages: DashboardMessage[];
  sessions: DashboardSession[];
  usage: DashboardUsage;
  stats: DashboardStats;
  user: { id: string; preferences: UserPreferences };
}
