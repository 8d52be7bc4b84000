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
 * Every statement of the opt-outs feature: the list, its settings, the not-on-WhatsApp memory and the
 * skips a start records. What sending does with them (the take passes over, a step moves to the skips,
 * a refusal is remembered) is the lane step's: `LaneStepRepository`. Methods take the caller's
 * EntityManager so a service composes them in one transaction.
 */
@Injectable()
export class OptOutsRepository {
  /** Newest first; `search` is digits found anywhere in the number. One more row than asked tells if a page follows. */
  async list(
    em: EntityManager,
    userId: string,
    page: { cursor?: ListCursor; limit: number; search?: string },
  ): Promise<{ optOuts: OptOutEntry[]; next?: ListCursor }> {
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
  async add(
    em: EntityManager,
    userId: string,
    phones: readonly string[],
    reason: OptOutReason,
    sourceEventId?: string,
  ): Promise<string[]> {
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
    const [r] = await rows<{ source_event_id: string | null }>(
      em,
      `SELECT source_event_id FROM opt_outs WHERE user_id = $1 AND phone = $2`,
      [userId, phone],
    );
    return r ? r.source_event_id : undefined;
  }

  async remove(em: EntityManager, userId: string, phone: string): Promise<boolean> {
    const gone = await rows(em, `DELETE FROM opt_outs WHERE user_id = $1 AND phone = $2 RETURNING 1`, [userId, phone]);
    return gone.length > 0;
  }

  /**
   * Skips decided at job start (those recipients are never queued), each with its row's variables of a
   * personalised job (`variables` by phone), so the report still shows whom it skipped; returns how many
   * were recorded.
   */
  async recordSkips(
    em: EntityManager,
    jobId: string,
    skips: ReadonlyMap<string, SkipReason>,
    variables: ReadonlyMap<string, Record<string, string>> = new Map(),
  ): Promise<number> {
    if (skips.size === 0) return 0;
    const phones = [...skips.keys()];
    const recorded = await rows(
      em,
      `INSERT INTO job_skips (job_id, phone, reason, variables)
       SELECT $1, s.phone, s.reason, s.variables::jsonb FROM unnest($2::text[], $3::text[], $4::text[]) AS s(phone, reason, variables)
       ON CONFLICT (job_id, phone) DO NOTHING
       RETURNING 1`,
      [
        jobId,
        phones,
        [...skips.values()],
        phones.map((p) => {
          const v = variables.get(p);
          return v ? JSON.stringify(v) : null;
        }),
      ],
    );
    return recorded.length;
  }

  /** The number wrote to us, so it is on WhatsApp after all. */
  async forgetNotOnWhatsApp(em: EntityManager, userId: string, phone: string): Promise<void> {
    await rows(em, `DELETE FROM not_on_whatsapp WHERE user_id = $1 AND phone = $2`, [userId, phone]);
  }

  /** Memory older than the window is dead weight: nothing reads it. */
  async pruneNotOnWhatsApp(em: EntityManager, days: number): Promise<number> {
    return (
      await rows(em, `DELETE FROM not_on_whatsapp WHERE at <= now() - make_interval(days => $1) RETURNING 1`, [days])
    ).length;
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
