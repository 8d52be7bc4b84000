import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';

/** Where the owner's period ends at `$1`: the default without a setting, none (NULL) with "keep". */
const CUTOFF = `$1::timestamptz - make_interval(days => CASE WHEN r.user_id IS NULL THEN $2::int ELSE r.days END)`;

/** Every statement of the read model's retention purge. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly tx: Transactions) {}

  async saveSettings(settings: RetentionPage['settings']): Promise<void> {
    if (settings.length === 0) return;
    await rows(
      this.tx.manager,
      `INSERT INTO retention_settings (user_id, days)
       SELECT * FROM unnest($1::text[], $2::int[])
       ON CONFLICT (user_id) DO UPDATE SET days = EXCLUDED.days`,
      [settings.map((s) => s.userId), settings.map((s) => s.days)],
    );
  }

  /**
   * One batch of messages older than their owner's period: the text and the reply go, the row stays
   * (a late receipt then finds it and counts nothing twice in the totals and monthly usage).
   */
  async blankMessagesBatch(now: Date): Promise<number> {
    return (
      await rows<{ n: number }>(
        this.tx.manager,
        `WITH done AS (
           UPDATE messages SET content = '', reply = NULL WHERE id = ANY (ARRAY(
             SELECT m.id FROM messages m LEFT JOIN retention_settings r ON r.user_id = m.user_id
              WHERE (m.content <> '' OR m.reply IS NOT NULL) AND m.created_at < ${CUTOFF} LIMIT $3))
           RETURNING 1
         ) SELECT count(*)::int AS n FROM done`,
        [now, ACCOUNT_LIMITS.retentionDefaultDays, ACCOUNT_LIMITS.deleteBatchRows],
      )
    )[0]!.n;
  }

  /** One batch of received messages (the replies' text) older than their owner's period. */
  async purgeInboundBatch(now: Date): Promise<number> {
    return (
      await rows<{ n: number }>(
        this.tx.manager,
        `WITH gone AS (
           DELETE FROM inbound_messages WHERE ctid = ANY (ARRAY(
             SELECT i.ctid FROM inbound_messages i LEFT JOIN retention_settings r ON r.user_id = i.user_id
              WHERE i.received_at < ${CUTOFF} LIMIT $3))
           RETURNING 1
         ) SELECT count(*)::int AS n FROM gone`,
        [now, ACCOUNT_LIMITS.retentionDefaultDays, ACCOUNT_LIMITS.deleteBatchRows],
      )
    )[0]!.n;
  }
}
