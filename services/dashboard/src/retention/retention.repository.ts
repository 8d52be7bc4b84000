import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import { RETENTION_CUTOFF_SQL, rows, saveRetentionSettings, Transactions } from '@bns/service-kit';

/** Where the owner's period ends at `$1`: the default without a setting, none (NULL) with "keep". */
const CUTOFF = RETENTION_CUTOFF_SQL;

/** Every statement of the read model's retention purge. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly tx: Transactions) {}

  saveSettings(settings: RetentionPage['settings']): Promise<void> {
    return saveRetentionSettings(this.tx.manager, settings);
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
