import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CONTACTS_LIMITS } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import type { Fact } from './fact-of.js';

const LAST = { sent: 'last_messaged_at', delivered: 'last_delivered_at', read: 'last_read_at' } as const;
const OUTCOME = { sent: 'messaged_at', delivered: 'delivered_at', read: 'read_at', failed: 'failed_at' } as const;
/** A message's status as its rank (a status never moves backwards). */
const rank = (expr: string) =>
  `CASE ${expr} WHEN 'sent' THEN 1 WHEN 'failed' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END`;

/**
 * Folds message events into the per-number facts, the campaign outcomes, the inbox and (when the user
 * keeps the setting on) the book itself. Every write is idempotent: a time is set with greatest(), an
 * inbox row is keyed by its event's own key, so a redelivered event changes nothing.
 */
@Injectable()
export class FactsRepository {
  constructor(private readonly tx: Transactions) {}

  fold(fact: Fact): Promise<void> {
    return this.tx.run(async (em) => {
      if (fact.kind === 'replied') await this.reply(em, fact);
      else await this.outbound(em, fact);
    });
  }

  /** Numbers the user's opt-out list just took (the jobs service's notice). */
  async optedOut(userId: string, phones: readonly string[], at: Date): Promise<void> {
    await rows(
      this.tx.manager,
      `INSERT INTO phone_facts (user_id, phone, opted_out_at) SELECT $1, p, $3 FROM unnest($2::text[]) AS p
       ON CONFLICT (user_id, phone) DO UPDATE SET opted_out_at = coalesce(phone_facts.opted_out_at, excluded.opted_out_at)`,
      [userId, phones, at],
    );
  }

  private async outbound(em: EntityManager, f: Extract<Fact, { kind: 'sent' | 'delivered' | 'read' | 'failed' }>) {
    if (f.kind !== 'failed') {
      const col = LAST[f.kind];
      await rows(
        em,
        `INSERT INTO phone_facts (user_id, phone, ${col}) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, phone) DO UPDATE SET ${col} = greatest(phone_facts.${col}, excluded.${col})`,
        [f.userId, f.phone, f.at],
      );
    } else if (f.notOnWhatsApp) {
      await rows(
        em,
        `INSERT INTO phone_facts (user_id, phone, not_on_whatsapp_at) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, phone) DO UPDATE SET not_on_whatsapp_at = greatest(phone_facts.not_on_whatsapp_at, excluded.not_on_whatsapp_at)`,
        [f.userId, f.phone, f.at],
      );
    }
    if (f.jobId) {
      const col = OUTCOME[f.kind];
      await rows(
        em,
        `INSERT INTO campaign_outcomes (user_id, job_id, phone, ${col}) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id, job_id, phone) DO UPDATE SET ${col} = coalesce(campaign_outcomes.${col}, excluded.${col})`,
        [f.userId, f.jobId, f.phone, f.at],
      );
    }
    // The inbox: the sent message once, later receipts only raise its status.
    const [inserted] = await rows<{ inserted: boolean }>(
      em,
      `INSERT INTO messages (user_id, phone, direction, key, text, at, status, job_id)
       VALUES ($1, $2, 'out', $3, $4, $5, $6, $7)
       ON CONFLICT (user_id, key) DO UPDATE SET status = excluded.status
         WHERE ${rank('excluded.status')} > ${rank('messages.status')}
       RETURNING (xmax = 0) AS inserted`,
      [f.userId, f.phone, f.key, f.text.slice(0, CONTACTS_LIMITS.conversationTextMax), f.at, f.kind, f.jobId ?? null],
    );
    if (inserted?.inserted) {
      await this.touchConversation(em, f.userId, f.phone, 'out', f.text, f.at, 0, f.jobId);
      if (f.kind === 'sent' && f.jobId) await this.learn(em, f.userId, f.phone, 'campaign');
    }
  }

  private async reply(em: EntityManager, f: Extract<Fact, { kind: 'replied' }>) {
    const [inserted] = await rows<{ job_id: string | null }>(
      em,
      `INSERT INTO messages (user_id, phone, direction, key, text, at, job_id)
       VALUES ($1, $2::text, 'in', $3, $4, $5,
         (SELECT job_id FROM messages WHERE user_id = $1 AND phone = $2::text AND direction = 'out' AND job_id IS NOT NULL
           ORDER BY at DESC, id DESC LIMIT 1))
       ON CONFLICT (user_id, key) DO NOTHING RETURNING job_id`,
      [f.userId, f.phone, f.key, f.text.slice(0, CONTACTS_LIMITS.conversationTextMax), f.at],
    );
    if (!inserted) return;
    await rows(
      em,
      `INSERT INTO phone_facts (user_id, phone, last_replied_at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, phone) DO UPDATE SET last_replied_at = greatest(phone_facts.last_replied_at, excluded.last_replied_at)`,
      [f.userId, f.phone, f.at],
    );
    if (inserted.job_id) {
      await rows(
        em,
        `INSERT INTO campaign_outcomes (user_id, job_id, phone, replied_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id, job_id, phone) DO UPDATE SET replied_at = coalesce(campaign_outcomes.replied_at, excluded.replied_at)`,
        [f.userId, inserted.job_id, f.phone, f.at],
      );
    }
    await this.touchConversation(em, f.userId, f.phone, 'in', f.text, f.at, 1, inserted.job_id ?? undefined);
    await this.learn(em, f.userId, f.phone, 'reply', true);
  }

  private async touchConversation(
    em: EntityManager,
    userId: string,
    phone: string,
    direction: 'in' | 'out',
    text: string,
    at: Date,
    unread: number,
    jobId: string | undefined,
  ) {
    await rows(
      em,
      `INSERT INTO conversations (user_id, phone, last_direction, last_text, last_at, unread, last_job_id, last_in_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $3 = 'in' THEN $5::timestamptz END)
       ON CONFLICT (user_id, phone) DO UPDATE SET
         unread = conversations.unread + excluded.unread,
         last_in_at = greatest(conversations.last_in_at, excluded.last_in_at),
         last_direction = CASE WHEN excluded.last_at >= conversations.last_at THEN excluded.last_direction ELSE conversations.last_direction END,
         last_text = CASE WHEN excluded.last_at >= conversations.last_at THEN excluded.last_text ELSE conversations.last_text END,
         last_job_id = CASE WHEN excluded.last_at >= conversations.last_at AND excluded.last_direction = 'in' THEN excluded.last_job_id ELSE conversations.last_job_id END,
         last_at = greatest(conversations.last_at, excluded.last_at)`,
      [userId, phone, direction, text.slice(0, CONTACTS_LIMITS.conversationTextMax), at, unread, jobId ?? null],
    );
  }

  /**
   * Adds the number to the book (never changes a contact that is there): a reply always, a campaign's
   * recipient when the user's "Save recipients as contacts" is on (the default). Never past the limit.
   */
  private async learn(em: EntityManager, userId: string, phone: string, source: 'campaign' | 'reply', always = false) {
    await rows(
      em,
      `INSERT INTO contacts (user_id, phone, source)
       SELECT $1::text, $2::text, $3::text
        WHERE ($4 OR coalesce((SELECT save_recipients FROM settings WHERE user_id = $1::text), true))
          AND NOT EXISTS (SELECT 1 FROM contacts WHERE user_id = $1::text AND phone = $2::text)
          AND (SELECT coalesce(sum(n), 0) FROM contact_count_deltas WHERE user_id = $1::text) < $5
       ON CONFLICT (user_id, phone) DO NOTHING`,
      [userId, phone, source, always, CONTACTS_LIMITS.contactsPerUserMax],
    );
  }
}
