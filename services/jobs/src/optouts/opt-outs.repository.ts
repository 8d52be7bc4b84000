import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  DEFAULT_OPT_OUT_SETTINGS,
  type OptOutEntry,
  type OptOutReason,
  type OptOutSettings,
  type SkipReason,
} from '@bns/contracts';
import { rows } from '@bns/service-kit';
import { waitingSql } from '../store/recipient-state.sql.js';

/** Where a page starts: the (at, phone) of the last entry of the previous page, opaque to clients. */
export interface ListCursor {
  at: Date;
  phone: string;
}

export function encodeCursor(c: ListCursor): string {
  return Buffer.from(`${c.at.toISOString()}|${c.phone}`).toString('base64url');
}

/** Undefined when the text is not a cursor this repository made. */
export function decodeCursor(text: string): ListCursor | undefined {
  const [iso, phone, extra] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (iso === undefined || phone === undefined || extra !== undefined || !/^\d{8}$/.test(phone)) return undefined;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? undefined : { at, phone };
}

interface OptOutRow {
  phone: string;
  reason: OptOutReason;
  at: Date;
}
const entryOf = (r: OptOutRow): OptOutEntry => ({ phoneNumber: r.phone, reason: r.reason, at: r.at.toISOString() });

/**
 * A recipient phone is suppressed for an account when it is on the opt-out list, or WhatsApp said it
 * does not know it within the memory window. `user`, `phone` and `days` are SQL expressions (columns
 * qualified with their table, or `$n` parameters) of the statement this is put into.
 */
export function suppressionReasonSql(user: string, phone: string, days: string): string {
  return `CASE WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = ${user} AND o.phone = ${phone}) THEN 'opted_out'
               WHEN EXISTS (SELECT 1 FROM not_on_whatsapp n WHERE n.user_id = ${user} AND n.phone = ${phone}
                              AND n.at > now() - make_interval(days => ${days})) THEN 'not_on_whatsapp' END`;
}

/**
 * The SQL condition "this recipient may be taken for sending", for the lane's take statement
 * (`RecipientsRepository.takeFirstOpen`): `recipientPhone` is the recipient's phone column, qualified with
 * its table (a bare `phone` would name the opt-out's own column inside the subquery), `user` and `days`
 * the statement's parameters, `inFlight` the recipient's in-flight condition (`inFlightSql`). Only
 * waiting recipients are held back: one left in flight by a dead worker may already be out, and its
 * idempotency key settles it.
 */
export function sendableSql(recipientPhone: string, inFlight: string, user: string, days: string): string {
  return `(${inFlight} OR (${suppressionReasonSql(user, recipientPhone, days)}) IS NULL)`;
}

/**
 * Every statement of the opt-outs feature: the list, its settings, the not-on-WhatsApp memory and the
 * skips of jobs. Methods take the caller's EntityManager so a service composes them in one transaction.
 */
@Injectable()
export class OptOutsRepository {
  /** Newest first; `search` is digits found anywhere in the number. One more row than asked tells if a page follows. */
  async list(em: EntityManager, userId: string, page: { cursor?: ListCursor; limit: number; search?: string }): Promise<{ optOuts: OptOutEntry[]; next?: ListCursor }> {
    const found = await rows<OptOutRow>(
      em,
      `SELECT phone, reason, at FROM opt_outs
        WHERE user_id = $1
          AND ($2::timestamptz IS NULL OR (at, phone) < ($2::timestamptz, $3::text))
          AND ($4::text IS NULL OR strpos(phone, $4::text) > 0)
        ORDER BY at DESC, phone DESC
        LIMIT $5`,
      [userId, page.cursor?.at ?? null, page.cursor?.phone ?? null, page.search || null, page.limit + 1],
    );
    const more = found.length > page.limit;
    const shown = more ? found.slice(0, page.limit) : found;
    const last = shown.at(-1);
    return { optOuts: shown.map(entryOf), ...(more && last ? { next: { at: last.at, phone: last.phone } } : {}) };
  }

  async count(em: EntityManager, userId: string): Promise<number> {
    const [r] = await rows<{ n: number }>(em, `SELECT count(*)::int AS n FROM opt_outs WHERE user_id = $1`, [userId]);
    return r?.n ?? 0;
  }

  /** Adds the numbers not listed yet (a listed number keeps its reason and time); returns those added. */
  async add(em: EntityManager, userId: string, phones: readonly string[], reason: OptOutReason, sourceEventId?: string): Promise<string[]> {
    const added = await rows<{ phone: string }>(
      em,
      `INSERT INTO opt_outs (user_id, phone, reason, source_event_id)
       SELECT $1, p.phone, $3, $4 FROM unnest($2::text[]) WITH ORDINALITY AS p(phone, n) ORDER BY p.n
       ON CONFLICT (user_id, phone) DO NOTHING
       RETURNING phone`,
      [userId, phones, reason, sourceEventId ?? null],
    );
    return added.map((r) => r.phone);
  }

  /** The inbound event that put a number on the list (null when it was added by hand). */
  async sourceEventOf(em: EntityManager, userId: string, phone: string): Promise<string | null | undefined> {
    const [r] = await rows<{ source_event_id: string | null }>(em, `SELECT source_event_id FROM opt_outs WHERE user_id = $1 AND phone = $2`, [userId, phone]);
    return r ? r.source_event_id : undefined;
  }

  async remove(em: EntityManager, userId: string, phone: string): Promise<boolean> {
    const gone = await rows(em, `DELETE FROM opt_outs WHERE user_id = $1 AND phone = $2 RETURNING 1`, [userId, phone]);
    return gone.length > 0;
  }

  /**
   * Which of `phones` an account must not send to, and why (opted out wins over not on WhatsApp).
   * The job-start check: one statement over the whole recipient list.
   */
  async suppressedAmong(em: EntityManager, userId: string, phones: readonly string[], notOnWhatsAppDays: number): Promise<Map<string, SkipReason>> {
    if (phones.length === 0) return new Map();
    const found = await rows<{ phone: string; reason: SkipReason }>(
      em,
      `SELECT s.phone, s.reason FROM (
         SELECT p.phone, ${suppressionReasonSql('$1', 'p.phone', '$3')} AS reason FROM unnest($2::text[]) AS p(phone)
       ) s WHERE s.reason IS NOT NULL`,
      [userId, phones, notOnWhatsAppDays],
    );
    return new Map(found.map((r) => [r.phone, r.reason]));
  }

  /** Opted-out numbers among `phones`, and those remembered not on WhatsApp (the review step's question). */
  async check(em: EntityManager, userId: string, phones: readonly string[], notOnWhatsAppDays: number): Promise<{ optedOut: string[]; notOnWhatsApp: string[] }> {
    const suppressed = await this.suppressedAmong(em, userId, phones, notOnWhatsAppDays);
    const optedOut: string[] = [];
    const notOnWhatsApp: string[] = [];
    for (const phone of phones) {
      const reason = suppressed.get(phone);
      if (reason === 'opted_out') optedOut.push(phone);
      else if (reason === 'not_on_whatsapp') notOnWhatsApp.push(phone);
    }
    return { optedOut, notOnWhatsApp };
  }

  /**
   * Moves the job's pending recipients that became suppressed (a STOP while the job runs) out of the
   * queue into its skips. Runs in the lane step's transaction (`LaneQueue.take`), before it takes the
   * next recipient; the caller adds them to the job's `skipped` count. Only
   * entries made since the job was created are looked at (older ones were skipped at its start), so a
   * step costs the few opt-outs of the last minutes, not a scan of the job's recipients.
   */
  async skipSuppressedRecipients(em: EntityManager, userId: string, jobId: string, notOnWhatsAppDays: number): Promise<{ phone: string; reason: SkipReason }[]> {
    return rows<{ phone: string; reason: SkipReason }>(
      em,
      `WITH since AS (
         -- A margin for an opt-out whose transaction began before the job's start and committed after it.
         SELECT created_at - interval '5 minutes' AS t FROM jobs WHERE id = $1
       ), suppressed AS (
         SELECT o.phone, 'opted_out' AS reason FROM opt_outs o, since
          WHERE o.user_id = $2 AND o.at >= since.t
         UNION ALL
         SELECT n.phone, 'not_on_whatsapp' FROM not_on_whatsapp n, since
          WHERE n.user_id = $2 AND n.at >= since.t AND n.at > now() - make_interval(days => $3)
       ), moved AS (
         DELETE FROM job_recipients r
          USING (SELECT DISTINCT ON (phone) phone, reason FROM suppressed ORDER BY phone, reason DESC) s
          WHERE r.job_id = $1 AND r.phone = s.phone AND ${waitingSql('r')}
         RETURNING r.seq, r.phone, s.reason
       )
       INSERT INTO job_skips (job_id, phone, reason)
       SELECT $1, m.phone, m.reason FROM moved m ORDER BY m.seq
       ON CONFLICT (job_id, phone) DO NOTHING
       RETURNING phone, reason`,
      [jobId, userId, notOnWhatsAppDays],
    );
  }

  /** Skips decided at job start (those recipients are never queued); returns how many were recorded. */
  async recordSkips(em: EntityManager, jobId: string, skips: ReadonlyMap<string, SkipReason>): Promise<number> {
    if (skips.size === 0) return 0;
    const recorded = await rows(
      em,
      `INSERT INTO job_skips (job_id, phone, reason) SELECT $1, s.phone, s.reason FROM unnest($2::text[], $3::text[]) AS s(phone, reason)
       ON CONFLICT (job_id, phone) DO NOTHING
       RETURNING 1`,
      [jobId, [...skips.keys()], [...skips.values()]],
    );
    return recorded.length;
  }

  /** WhatsApp said it does not know this number: remember it (again) from now. */
  async rememberNotOnWhatsApp(em: EntityManager, userId: string, phone: string): Promise<void> {
    await rows(
      em,
      `INSERT INTO not_on_whatsapp (user_id, phone) VALUES ($1, $2) ON CONFLICT (user_id, phone) DO UPDATE SET at = now()`,
      [userId, phone],
    );
  }

  /** The number wrote to us, so it is on WhatsApp after all. */
  async forgetNotOnWhatsApp(em: EntityManager, userId: string, phone: string): Promise<void> {
    await rows(em, `DELETE FROM not_on_whatsapp WHERE user_id = $1 AND phone = $2`, [userId, phone]);
  }

  /** Memory older than the window is dead weight: nothing reads it. */
  async pruneNotOnWhatsApp(em: EntityManager, days: number): Promise<number> {
    return (await rows(em, `DELETE FROM not_on_whatsapp WHERE at <= now() - make_interval(days => $1) RETURNING 1`, [days])).length;
  }

  async settings(em: EntityManager, userId: string): Promise<OptOutSettings> {
    const [r] = await rows<{ keywords: string[]; confirmation_enabled: boolean; confirmation_text: string }>(
      em,
      `SELECT keywords, confirmation_enabled, confirmation_text FROM opt_out_settings WHERE user_id = $1`,
      [userId],
    );
    if (!r) return { ...DEFAULT_OPT_OUT_SETTINGS, keywords: [...DEFAULT_OPT_OUT_SETTINGS.keywords] };
    return { keywords: r.keywords, confirmationEnabled: r.confirmation_enabled, confirmationText: r.confirmation_text };
  }

  async saveSettings(em: EntityManager, userId: string, s: OptOutSettings): Promise<OptOutSettings> {
    await rows(
      em,
      `INSERT INTO opt_out_settings (user_id, keywords, confirmation_enabled, confirmation_text) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE SET keywords = EXCLUDED.keywords, confirmation_enabled = EXCLUDED.confirmation_enabled,
              confirmation_text = EXCLUDED.confirmation_text, updated_at = now()`,
      [userId, s.keywords, s.confirmationEnabled, s.confirmationText],
    );
    return s;
  }

  /** Serialises settings changes of one account (read–modify–write of a partial update). */
  async lockSettings(em: EntityManager, userId: string): Promise<void> {
    await rows(em, `SELECT pg_advisory_xact_lock(hashtext('bns:opt-out-settings:' || $1))`, [userId]);
  }
}
